/** The ingest entry point over the in-memory core: API Gateway events in, problem+json or 202 out. */
import { DocrelayError } from '../../../functions/commons/errors';
import { makeIngestHandler } from '../../../functions/handlers/ingest/make-handler';
import { memoryBench, signedWebhook } from '../core/support';
import { apiEvent, lambdaContext, recordingObservability } from './support';

function setup() {
  const bench = memoryBench();
  const observability = recordingObservability('ingest');
  const handler = makeIngestHandler(bench.ingest, observability);
  const invoke = async (event: ReturnType<typeof apiEvent>) => {
    const response = await handler(event, lambdaContext('docrelay-ingest'));
    return { ...response, json: JSON.parse(String(response.body)) as Record<string, unknown> };
  };
  return { bench, observability, invoke };
}

/** A webhook event for `integrationId`, signed unless headers say otherwise. */
function hook(
  integrationId: string,
  body: unknown,
  options: { method?: string; headers?: Record<string, string>; base64?: boolean } = {},
) {
  const signed = signedWebhook(integrationId, body, options.headers);
  return apiEvent({
    method: options.method ?? 'POST',
    routeKey: 'POST /v1/hooks/{integrationId}',
    path: `/v1/hooks/${integrationId}`,
    pathParameters: { integrationId },
    headers: signed.headers,
    body: signed.rawBody,
    ...(options.base64 === undefined ? {} : { base64: options.base64 }),
  });
}

const invoice = { id: 'n-1', customer: 'Ada', number: '42' };

describe('ingest handler', () => {
  it('accepts a signed webhook with 202, queues its job, and logs and counts it', async () => {
    const { bench, observability, invoke } = setup();
    const response = await invoke(hook('notes', invoice));
    expect(response.statusCode).toBe(202);
    expect(response.headers).toEqual({ 'content-type': 'application/json' });
    expect(response.json).toEqual({ deliveryId: 'n-1', jobs: [{ jobId: 'job-1', rule: 'invoice' }] });
    expect(bench.queue.jobIds).toEqual(['job-1']);
    expect(observability.lines).toContainEqual({
      level: 'info',
      message: 'delivery accepted',
      fields: { integration: 'notes', deliveryId: 'n-1', jobs: ['job-1'], duplicate: false },
    });
    expect(observability.points).toEqual([
      { name: 'DeliveriesAccepted', unit: 'Count', value: 1 },
      { name: 'JobsQueued', unit: 'Count', value: 1 },
    ]);
  });

  it('on AWS, takes the integration from its own route (ANY /v1/hooks/<id>, no path parameter)', async () => {
    const { bench, invoke } = setup();
    const signed = signedWebhook('notes', invoice);
    const event = apiEvent({
      method: 'POST',
      routeKey: 'ANY /v1/hooks/notes',
      path: '/v1/hooks/notes',
      headers: signed.headers,
      body: signed.rawBody,
    });
    expect((await invoke(event)).statusCode).toBe(202);
    expect(bench.queue.jobIds).toEqual(['job-1']);
  });

  it('verifies a base64-encoded body over the bytes received', async () => {
    const { invoke } = setup();
    expect((await invoke(hook('notes', invoice, { base64: true }))).statusCode).toBe(202);
  });

  it('answers a duplicate with 200, counting it as a duplicate with no new jobs', async () => {
    const { bench, observability, invoke } = setup();
    await invoke(hook('notes', invoice));
    const again = await invoke(hook('notes', invoice));
    expect(again.statusCode).toBe(200);
    expect(again.json).toMatchObject({ deliveryId: 'n-1', duplicate: true });
    expect(bench.jobs.jobs.size).toBe(1);
    expect(observability.points.slice(2)).toEqual([
      { name: 'DuplicateDeliveries', unit: 'Count', value: 1 },
      { name: 'JobsQueued', unit: 'Count', value: 0 },
    ]);
  });

  it('refuses another method with 405 and an Allow header', async () => {
    const { bench, observability, invoke } = setup();
    const response = await invoke(hook('notes', invoice, { method: 'GET' }));
    expect(response.statusCode).toBe(405);
    expect(response.headers).toEqual({ 'content-type': 'application/problem+json', allow: 'POST' });
    expect(response.json).toMatchObject({ type: 'urn:docrelay:problem:method-not-allowed', status: 405 });
    expect(bench.queue.messages).toEqual([]);
    expect(observability.lines).toContainEqual({
      level: 'warn',
      message: 'delivery refused',
      fields: { integration: 'notes', status: 405, code: 'PROBLEM_METHOD_NOT_ALLOWED' },
    });
    expect(observability.metricNames()).toEqual(['DeliveriesRefused']);
  });

  it('refuses an unknown integration with 404', async () => {
    const { invoke } = setup();
    const response = await invoke(hook('nope', invoice));
    expect(response.statusCode).toBe(404);
    expect(response.json).toMatchObject({
      type: 'urn:docrelay:problem:unknown-integration',
      title: 'Unknown integration',
    });
  });

  it('refuses a bad signature with 401, before anything is recorded', async () => {
    const { bench, observability, invoke } = setup();
    const response = await invoke(
      hook('notes', invoice, { headers: { 'x-signature': `sha256=${'0'.repeat(64)}` } }),
    );
    expect(response.statusCode).toBe(401);
    expect(response.json).toMatchObject({ type: 'urn:docrelay:problem:invalid-signature', status: 401 });
    expect(bench.jobs.deliveries.size).toBe(0);
    expect(observability.metricNames()).toEqual(['DeliveriesRefused']);
  });

  it('answers 503 with Retry-After when the queue fails, and logs the failure by its code only', async () => {
    const { bench, observability, invoke } = setup();
    bench.queue.failNext(
      new DocrelayError('QUEUE_UNAVAILABLE', 'queue https://sqs/secret-url down', { retryable: true }),
    );
    const response = await invoke(hook('notes', invoice));
    expect(response.statusCode).toBe(503);
    expect(response.headers).toMatchObject({ 'retry-after': '5' });
    expect(response.body).not.toContain('secret-url');
    expect(observability.lines).toContainEqual({
      level: 'error',
      message: 'delivery failed',
      fields: { integration: 'notes', status: 503, code: 'QUEUE_UNAVAILABLE', error: 'DocrelayError' },
    });
    expect(observability.metricNames()).toEqual(['IngestErrors']);
  });

  it('answers 500 without internals for an unexpected error', async () => {
    const { bench, observability, invoke } = setup();
    bench.jobs.failNext(
      'createDelivery',
      new TypeError('cannot read properties of undefined (reading "pk")'),
    );
    const response = await invoke(hook('notes', invoice));
    expect(response.statusCode).toBe(500);
    expect(response.json).toEqual({
      type: 'urn:docrelay:problem:internal-error',
      title: 'Internal error',
      status: 500,
      detail: 'docrelay failed to handle the request.',
    });
    expect(observability.lines.at(-1)).toMatchObject({
      level: 'error',
      fields: { code: 'INTERNAL', error: 'TypeError' },
    });
  });
});
