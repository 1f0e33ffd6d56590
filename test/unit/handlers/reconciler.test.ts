/** The reconciler entry point: one pass of the core's reconcile, counted. */
import { acceptWebhook } from '../../../functions/core/accept-delivery';
import { makeReconcilerHandler } from '../../../functions/handlers/reconciler/make-handler';
import { memoryBench, signedWebhook } from '../core/support';
import { lambdaContext, recordingObservability } from './support';

describe('reconciler handler', () => {
  it('completes a stranded delivery and counts what it did', async () => {
    const bench = memoryBench();
    // The queue fails under the ingest: the delivery is recorded but its message never went out.
    bench.queue.failNext(new Error('queue down'));
    await expect(
      acceptWebhook(bench.ingest, signedWebhook('notes', { id: 'n-1', customer: 'Ada', number: '1' })),
    ).rejects.toThrow();
    expect(bench.queue.jobIds).toEqual([]);
    bench.clock.advance(60 * 60_000);
    const observability = recordingObservability('reconciler');
    const handler = makeReconcilerHandler(
      { jobs: bench.jobs, queue: bench.queue, leaseMs: 60_000, now: bench.clock.now },
      observability,
    );
    const result = await handler(undefined, lambdaContext('docrelay-reconciler'));
    expect(result.deliveriesCompleted).toBe(1);
    expect(bench.queue.jobIds).toEqual(['job-1']);
    expect(observability.points).toEqual([
      { name: 'DeliveriesCompleted', unit: 'Count', value: 1 },
      { name: 'JobsResent', unit: 'Count', value: result.jobsResent },
    ]);
  });

  it('counts zeros when nothing is stranded', async () => {
    const bench = memoryBench();
    const observability = recordingObservability('reconciler');
    const handler = makeReconcilerHandler(
      { jobs: bench.jobs, queue: bench.queue, leaseMs: 60_000 },
      observability,
    );
    await expect(handler(undefined, lambdaContext('docrelay-reconciler'))).resolves.toEqual({
      deliveriesCompleted: 0,
      jobsResent: 0,
      jobsWaiting: 0,
    });
    expect(observability.points.map((p) => p.value)).toEqual([0, 0]);
  });
});
