import { createHash, createHmac } from 'node:crypto';
import { DocrelayError } from '../../../functions/commons/errors';
import { parseConfig } from '../../../functions/config/load';
import { acceptEvent, acceptWebhook } from '../../../functions/core/accept-delivery';
import { DeliveryRefusedError } from '../../../functions/core/errors';
import { transitions } from '../../../functions/core/job';
import { ENQUEUE_GRACE_MS } from '../../../functions/core/outbox';
import { openPayload, payloadMappingInput } from '../../../functions/core/payload';
import { memoryBench, SEALING_SECRET, signedWebhook, WEBHOOK_SECRET } from './support';

/** A worker's claim: the job is no longer waiting for its first pickup. */
async function pickUp(b: ReturnType<typeof memoryBench>, jobId: string): Promise<void> {
  const job = await b.jobs.getJob(jobId);
  if (job === undefined) throw new Error(`no job ${jobId}`);
  await b.jobs.updateJob(job, transitions.claim(job, 'worker', b.clock.ms + 60_000));
}

const refusal = async (promise: Promise<unknown>): Promise<string> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DeliveryRefusedError);
  return (error as DeliveryRefusedError).reason;
};

describe('acceptWebhook', () => {
  it('records the delivery with its jobs and sends one message per job, in two calls (202)', async () => {
    const b = memoryBench();
    const answer = await acceptWebhook(
      b.ingest,
      signedWebhook('releases', { name: 'v1', repo: 'r', draft: false }),
    );
    expect(answer).toEqual({
      status: 202,
      body: {
        deliveryId: expect.stringMatching(/^sha256:/),
        jobs: [
          { jobId: 'job-1', rule: 'notes' },
          { jobId: 'job-2', rule: 'changelog' },
        ],
      },
    });
    expect(b.queue.jobIds).toEqual(['job-1', 'job-2']);
    expect([...b.jobs.jobs.values()].map((j) => [j.jobId, j.status, j.templateFileId])).toEqual([
      ['job-1', 'queued', '90021'],
      ['job-2', 'queued', '90022'],
    ]);
    const delivery = await b.jobs.getDelivery('releases', answer.body.deliveryId);
    // Left open: the reconciler marks it once its grace has run out (core/outbox.ts).
    expect(delivery?.enqueuedAt).toBeUndefined();
    // The payload rests sealed, signature header dropped.
    const payload = openPayload(
      delivery?.sealedPayload ?? '',
      SEALING_SECRET,
      'releases',
      answer.body.deliveryId,
    );
    expect(JSON.parse(payload.bodyText)).toEqual({ name: 'v1', repo: 'r', draft: false });
    expect(payload.headers['x-signature']).toBeUndefined();
    // Two calls before the answer: the delivery with its jobs (puts in turn on DynamoDB), then the messages.
    expect(b.jobs.writes.map((w) => w.operation)).toEqual(['createDelivery']);
  });

  it("keeps a JSON body's own media type, so the worker's $contentType is the ingest's", async () => {
    const b = memoryBench();
    const kept = async (contentType: string, id: string) => {
      const webhook = signedWebhook(
        'notes',
        { id, customer: 'A', number: '1' },
        { 'content-type': contentType },
      );
      await acceptWebhook(b.ingest, webhook);
      const delivery = await b.jobs.getDelivery('notes', id);
      const payload = openPayload(delivery?.sealedPayload ?? '', SEALING_SECRET, 'notes', id);
      return payloadMappingInput(payload, '2026-01-01T00:00:00.000Z');
    };
    expect(await kept('application/cloudevents+json; charset=utf-8', 'c-1')).toMatchObject({
      contentType: 'application/cloudevents+json',
      body: { id: 'c-1', customer: 'A' },
    });
    expect(await kept('application/json', 'c-2')).toMatchObject({ contentType: 'application/json' });
  });

  it('makes no job for a rule whose condition does not hold', async () => {
    const b = memoryBench();
    const answer = await acceptWebhook(
      b.ingest,
      signedWebhook('releases', { name: 'v1', repo: 'r', draft: true }),
    );
    expect(answer.body.jobs.map((j) => j.rule)).toEqual(['notes']);
  });

  it('answers 200 with no jobs when no rule matches, recording and sending nothing', async () => {
    const b = memoryBench();
    const body = { id: 'p-1', action: 'edited', customer: 'A', number: '1' };
    for (let copy = 0; copy < 2; copy += 1) {
      expect(await acceptWebhook(b.ingest, signedWebhook('published', body))).toEqual({
        status: 200,
        body: { deliveryId: 'p-1', jobs: [] },
      });
    }
    expect(b.jobs.writes).toEqual([]);
    expect(b.queue.jobIds).toEqual([]);
  });

  it('answers a delivery seen before as a duplicate even when this copy matches no rule', async () => {
    const b = memoryBench();
    const first = await acceptWebhook(
      b.ingest,
      signedWebhook('published', { id: 'p-2', action: 'published', customer: 'A', number: '1' }),
    );
    expect(first.status).toBe(202);
    // The same id with a body no rule matches (the sender changed it, or the config changed since).
    const again = await acceptWebhook(
      b.ingest,
      signedWebhook('published', { id: 'p-2', action: 'edited', customer: 'A', number: '1' }),
    );
    expect(again).toEqual({
      status: 200,
      body: { deliveryId: 'p-2', jobs: first.body.jobs, duplicate: true },
    });
    expect(b.jobs.writes.map((w) => w.operation)).toEqual(['createDelivery']);
  });

  it('answers a duplicate with the first jobs and sends nothing more once they were picked up', async () => {
    const b = memoryBench();
    const first = await acceptWebhook(
      b.ingest,
      signedWebhook('notes', { id: 'n-1', customer: 'A', number: '1' }),
    );
    await pickUp(b, 'job-1');
    const again = await acceptWebhook(
      b.ingest,
      signedWebhook('notes', { id: 'n-1', customer: 'A', number: '1' }),
    );
    expect(first.body.deliveryId).toBe('n-1');
    expect(again).toEqual({
      status: 200,
      body: { deliveryId: 'n-1', jobs: first.body.jobs, duplicate: true },
    });
    expect(b.queue.jobIds).toEqual(['job-1']);
  });

  it('completes the outbox on a duplicate whose first attempt could not send (the sender retried a 503)', async () => {
    const b = memoryBench();
    b.queue.failNext(new DocrelayError('QUEUE_UNAVAILABLE', 'down', { retryable: true }));
    await expect(
      acceptWebhook(b.ingest, signedWebhook('notes', { id: 'n-2', customer: 'A', number: '1' })),
    ).rejects.toMatchObject({ code: 'QUEUE_UNAVAILABLE' });
    expect((await b.jobs.getDelivery('notes', 'n-2'))?.enqueuedAt).toBeUndefined();
    const retry = await acceptWebhook(
      b.ingest,
      signedWebhook('notes', { id: 'n-2', customer: 'A', number: '1' }),
    );
    expect(retry.body.duplicate).toBe(true);
    expect(b.queue.jobIds).toEqual(['job-1']);
    // Within the grace the retry writes nothing: the reconciler completes the delivery afterwards.
    expect((await b.jobs.getDelivery('notes', 'n-2'))?.enqueuedAt).toBeUndefined();
  });

  it('sends nothing for a duplicate within the grace of a first attempt that noted no failed send', async () => {
    const b = memoryBench();
    await acceptWebhook(b.ingest, signedWebhook('notes', { id: 'n-5', customer: 'A', number: '1' }));
    await acceptWebhook(b.ingest, signedWebhook('notes', { id: 'n-5', customer: 'A', number: '1' }));
    // The job waits for its first pickup, but its message went out with the first attempt.
    expect(b.queue.jobIds).toEqual(['job-1']);
  });

  it('still answers 503 when noting the failed send fails too (the reconciler completes it later)', async () => {
    const b = memoryBench();
    b.queue.failNext(new DocrelayError('QUEUE_UNAVAILABLE', 'down', { retryable: true }));
    b.jobs.failNext('markDeliverySendFailed', new Error('table down'));
    await expect(
      acceptWebhook(b.ingest, signedWebhook('notes', { id: 'n-6', customer: 'A', number: '1' })),
    ).rejects.toMatchObject({ code: 'QUEUE_UNAVAILABLE' });
    expect((await b.jobs.getDelivery('notes', 'n-6'))?.sendFailedAt).toBeUndefined();
  });

  it('writes and sends the missing jobs of a duplicate within the grace of a first attempt that died before writing them', async () => {
    const b = memoryBench();
    // A first attempt that recorded the delivery and died before writing its jobs (its sender got no 2xx).
    await b.jobs.createDelivery(
      {
        integration: 'notes',
        deliveryId: 'n-3',
        receivedAt: new Date(b.clock.ms).toISOString(),
        jobs: [{ jobId: 'job-0', rule: 'invoice', templateId: '9001' }],
        sealedPayload: 's',
      },
      [],
    );
    const within = await acceptWebhook(
      b.ingest,
      signedWebhook('notes', { id: 'n-3', customer: 'A', number: '1' }),
    );
    expect(within).toEqual({
      status: 200,
      body: { deliveryId: 'n-3', jobs: [{ jobId: 'job-0', rule: 'invoice' }], duplicate: true },
    });
    expect(b.queue.jobIds).toEqual(['job-0']);
    expect((await b.jobs.getJob('job-0'))?.status).toBe('queued');
    expect((await b.jobs.getDelivery('notes', 'n-3'))?.enqueuedAt).toBeDefined();
    // Complete: a later copy sends nothing more.
    await acceptWebhook(b.ingest, signedWebhook('notes', { id: 'n-3', customer: 'A', number: '1' }));
    expect(b.queue.jobIds).toEqual(['job-0']);
  });

  it('completes the outbox of a duplicate after the grace, writing its missing jobs', async () => {
    const b = memoryBench();
    await b.jobs.createDelivery(
      {
        integration: 'notes',
        deliveryId: 'n-4',
        receivedAt: new Date(b.clock.ms).toISOString(),
        jobs: [{ jobId: 'job-0', rule: 'invoice', templateId: '9001' }],
        sealedPayload: 's',
      },
      [],
    );
    b.clock.advance(ENQUEUE_GRACE_MS);
    await acceptWebhook(b.ingest, signedWebhook('notes', { id: 'n-4', customer: 'A', number: '1' }));
    expect(b.queue.jobIds).toEqual(['job-0']);
    expect((await b.jobs.getJob('job-0'))?.status).toBe('queued');
    expect((await b.jobs.getDelivery('notes', 'n-4'))?.enqueuedAt).toBeDefined();
  });

  it('answers the same signed content under a new unsigned id as a duplicate of the first (a replay)', async () => {
    const b = memoryBench();
    const body = { customer: 'A', number: '1' };
    const first = await acceptWebhook(b.ingest, signedWebhook('relayed', body, { 'x-request-id': 'r-1' }));
    await pickUp(b, 'job-1');
    const replay = await acceptWebhook(
      b.ingest,
      signedWebhook('relayed', body, { 'x-request-id': 'attacker-2' }),
    );
    const again = await acceptWebhook(b.ingest, signedWebhook('relayed', body, { 'x-request-id': 'r-1' }));
    expect(first).toMatchObject({ status: 202, body: { deliveryId: 'r-1' } });
    expect(replay).toEqual({
      status: 200,
      body: { deliveryId: 'r-1', jobs: first.body.jobs, duplicate: true },
    });
    expect(again).toEqual({
      status: 200,
      body: { deliveryId: 'r-1', jobs: first.body.jobs, duplicate: true },
    });
    expect(b.queue.jobIds).toEqual(['job-1']);
    // Other content under a new id is a new delivery.
    const other = await acceptWebhook(
      b.ingest,
      signedWebhook('relayed', { customer: 'B', number: '2' }, { 'x-request-id': 'r-2' }),
    );
    expect(other.status).toBe(202);
  });

  it('keys GitHub content by a digest of the HMAC it verified: a replay under a new id is a duplicate, and the signature is not kept', async () => {
    const b = memoryBench();
    const ingest = {
      ...b.ingest,
      config: parseConfig(`service: { baseUrl: "http://127.0.0.1:9", apiKeySecret: unit/api-key }
integrations:
  - id: gh
    verify: { scheme: github, secret: unit/webhook }
    documents:
      - { name: note, when: "action = 'opened'", template: { id: "9001" }, data: { Title: "title" } }
`),
    };
    const rawBody = Buffer.from(JSON.stringify({ action: 'opened', title: 'T' }));
    const mac = createHmac('sha256', WEBHOOK_SECRET).update(rawBody).digest('hex');
    const delivery = (id: string, signature: string) => ({
      integrationId: 'gh',
      headers: {
        'content-type': 'application/json',
        'x-github-delivery': id,
        'x-hub-signature-256': `sha256=${signature}`,
      },
      rawBody,
      query: {},
      method: 'POST',
      url: 'https://hooks.example.test/v1/hooks/gh',
    });
    expect((await acceptWebhook(ingest, delivery('d-1', mac))).status).toBe(202);
    // The same signature, even spelt in upper case, under another id: the same content.
    const replay = await acceptWebhook(ingest, delivery('d-2', mac.toUpperCase()));
    expect(replay.body).toMatchObject({ deliveryId: 'd-1', duplicate: true });
    const digest = createHash('sha256').update(Buffer.from(mac, 'hex')).digest('hex');
    expect([...b.jobs.contents.keys()]).toEqual([`gh#hmac:${digest}`]);
    expect(JSON.stringify([...b.jobs.contents])).not.toContain(mac);
  });

  it('claims no content key where the signature covers the id', async () => {
    const b = memoryBench();
    await acceptWebhook(b.ingest, signedWebhook('notes', { id: 'n-9', customer: 'A', number: '1' }));
    expect(b.jobs.contents.size).toBe(0);
  });

  it.each([
    ['an unknown integration', signedWebhook('nope', {}), 'unknown-integration'],
    ['an events-only integration', signedWebhook('events-only', {}), 'unknown-integration'],
    [
      'a body that is not JSON',
      { ...signedWebhook('notes', '{"id":'), headers: { ...signedWebhook('notes', '{"id":').headers } },
      'malformed-body',
    ],
    ['a body that is not UTF-8', signedWebhook('notes', '\u0000'), 'malformed-body'],
  ])('refuses %s', async (_what, request, reason) => {
    const b = memoryBench();
    const bad =
      reason === 'malformed-body' && _what.includes('UTF-8')
        ? (() => {
            const raw = Buffer.from([0x7b, 0xff, 0x7d]);
            return { ...signedWebhook('notes', '{}'), rawBody: raw, headers: signedWebhookHeaders(raw) };
          })()
        : request;
    expect(await refusal(acceptWebhook(b.ingest, bad))).toBe(reason);
    expect(b.jobs.writes).toEqual([]);
    expect(b.queue.messages).toEqual([]);
  });

  it('refuses a body over the limit before verifying it, and a content type it cannot decode', async () => {
    const b = memoryBench();
    const big = signedWebhook('notes', { id: 'x'.repeat(1_100_000) });
    expect(await refusal(acceptWebhook(b.ingest, big))).toBe('payload-too-large');
    const multipart = signedWebhook(
      'notes',
      { id: 'a' },
      { 'content-type': 'multipart/form-data; boundary=x' },
    );
    expect(await refusal(acceptWebhook(b.ingest, multipart))).toBe('unsupported-media-type');
    const pdf = signedWebhook('notes', { id: 'a' }, { 'content-type': 'application/pdf' });
    expect(await refusal(acceptWebhook(b.ingest, pdf))).toBe('unsupported-media-type');
    const vendorJson = signedWebhook(
      'notes',
      { id: 'a', customer: 'c', number: '1' },
      {
        'content-type': 'application/vnd.thing+json; charset=utf-8',
      },
    );
    expect((await acceptWebhook(b.ingest, vendorJson)).status).toBe(202);
  });

  it('refuses a payload whose expressions cannot be evaluated, naming the problem', async () => {
    const b = memoryBench();
    const nested = signedWebhook('notes', `${'['.repeat(5000)}${']'.repeat(5000)}`);
    expect(await refusal(acceptWebhook(b.ingest, nested))).toMatch(/malformed-body|unprocessable-payload/);
  });

  it('refuses a wrong signature with the scheme error, recording nothing', async () => {
    const b = memoryBench();
    const request = signedWebhook('notes', { id: 'n' });
    await expect(
      acceptWebhook(b.ingest, { ...request, headers: { ...request.headers, 'x-signature': 'sha256=00' } }),
    ).rejects.toMatchObject({ name: 'SignatureError' });
    expect(b.jobs.writes).toEqual([]);
  });
});

function signedWebhookHeaders(raw: Buffer): Record<string, string> {
  const { createHmac } = require('node:crypto') as typeof import('node:crypto');
  return {
    'content-type': 'application/json',
    'x-signature': `sha256=${createHmac('sha256', 'unit-webhook-secret-0123456789').update(raw).digest('hex')}`,
  };
}

describe('acceptEvent', () => {
  it('takes the event id as the delivery id and queues its job', async () => {
    const b = memoryBench();
    const event = { id: 'evt-1', source: 'unit.orders', detail: { customer: 'C', number: '7' } };
    const answer = await acceptEvent(b.ingest, 'events-only', event);
    expect(answer).toMatchObject({ status: 202, body: { deliveryId: 'evt-1', jobs: [{ rule: 'invoice' }] } });
    expect(b.queue.jobIds).toHaveLength(1);
  });

  it('refuses an integration that takes no events', async () => {
    const b = memoryBench();
    expect(await refusal(acceptEvent(b.ingest, 'notes', { id: 'e' }))).toBe('unknown-integration');
  });
});
