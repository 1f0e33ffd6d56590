/** The event ingest entry point: an EventBridge target input becomes a delivery of its integration. */
import { makeEventIngestHandler } from '../../../functions/handlers/event-ingest/make-handler';
import { memoryBench } from '../core/support';
import { lambdaContext, recordingObservability } from './support';

/** An EventBridge event as the bus delivers it. */
const orderEvent = (id: string) => ({
  version: '0',
  id,
  'detail-type': 'Order Placed',
  source: 'unit.orders',
  account: '123456789012',
  time: '2026-03-01T12:00:00Z',
  region: 'eu-west-1',
  resources: [],
  detail: { customer: 'Ada', number: '42' },
});

function setup() {
  const bench = memoryBench();
  const observability = recordingObservability('event-ingest');
  const handler = makeEventIngestHandler(bench.ingest, observability);
  return {
    bench,
    observability,
    invoke: (input: unknown) => handler(input, lambdaContext('docrelay-event-ingest')),
  };
}

describe('event ingest handler', () => {
  it('records the event as a delivery (its id the delivery id) and queues its job', async () => {
    const { bench, observability, invoke } = setup();
    const body = await invoke({ integrationId: 'events-only', event: orderEvent('e-1') });
    expect(body).toEqual({ deliveryId: 'e-1', jobs: [{ jobId: 'job-1', rule: 'invoice' }] });
    expect(bench.queue.jobIds).toEqual(['job-1']);
    expect(observability.lines).toContainEqual({
      level: 'info',
      message: 'event accepted',
      fields: { integration: 'events-only', deliveryId: 'e-1', jobs: ['job-1'], duplicate: false },
    });
    expect(observability.metricNames()).toEqual(['DeliveriesAccepted', 'JobsQueued']);
  });

  it('takes the same event twice as one delivery', async () => {
    const { bench, observability, invoke } = setup();
    await invoke({ integrationId: 'events-only', event: orderEvent('e-1') });
    await expect(invoke({ integrationId: 'events-only', event: orderEvent('e-1') })).resolves.toMatchObject({
      duplicate: true,
    });
    expect(bench.jobs.jobs.size).toBe(1);
    expect(observability.metricNames().slice(2)).toEqual(['DuplicateDeliveries', 'JobsQueued']);
  });

  it('throws (so EventBridge retries or dead-letters) on an input that is not a target input', async () => {
    const { bench, invoke } = setup();
    await expect(invoke({ integrationId: 'events-only', event: { id: 'e-1' } })).rejects.toThrow();
    await expect(invoke({ event: orderEvent('e-1') })).rejects.toThrow();
    expect(bench.jobs.deliveries.size).toBe(0);
  });

  it('throws when the core refuses the event', async () => {
    const { invoke } = setup();
    await expect(invoke({ integrationId: 'nope', event: orderEvent('e-1') })).rejects.toMatchObject({
      reason: 'unknown-integration',
    });
  });
});
