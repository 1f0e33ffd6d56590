/**
 * A delivery recorded in turn (content key, delivery, jobs: no transaction) on the DynamoDB adapter over the fake
 * table: whichever write fails, nothing is answered 2xx without every job written, and the sender's retry
 * writes and sends what the first attempt could not.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoJobRepository } from '../../../functions/adapters/dynamodb/job-table';
import { acceptWebhook, type IngestDeps, type WebhookRequest } from '../../../functions/core/accept-delivery';
import { transitions } from '../../../functions/core/job';
import { ENQUEUE_GRACE_MS } from '../../../functions/core/outbox';
import { reconcile } from '../../../functions/core/reconcile';
import { FakeJobTable } from '../adapters/dynamodb/fake-document-client';
import { memoryBench, signedWebhook } from './support';

/** The bench with its jobs on the DynamoDB adapter over a fake table; `beforePut` runs before each put. */
function dynamoBench(beforePut: (item: Record<string, unknown>) => Promise<void> = async () => undefined) {
  const b = memoryBench();
  const table = new FakeJobTable();
  const client = {
    send: async (command: unknown) => {
      if (command instanceof PutCommand) await beforePut(command.input.Item ?? {});
      return table.client.send(command as never);
    },
  } as unknown as typeof table.client;
  const jobs = new DynamoJobRepository(client, 'jobs-table', { now: b.clock.now });
  const ingest: IngestDeps = { ...b.ingest, jobs };
  return { ...b, table, jobs, ingest };
}

const outcome = (promise: Promise<{ status: number; body: { jobs: Array<{ jobId: string }> } }>) =>
  promise.then(
    (answer) => ({ status: answer.status, jobIds: answer.body.jobs.map((j) => j.jobId) }),
    () => ({ status: 500, jobIds: [] as string[] }),
  );

const cases: Array<[string, WebhookRequest]> = [
  ['two jobs, no content key', signedWebhook('releases', { name: 'v1', repo: 'r', draft: false })],
  [
    'one job and a content key',
    signedWebhook('relayed', { customer: 'A', number: '1' }, { 'x-request-id': 'r-1' }),
  ],
];

describe('a delivery whose writes fail part-way', () => {
  it.each(cases)(
    '(%s) is never answered 2xx without its jobs, and its retry completes it',
    async (_, request) => {
      // Puts of a whole first attempt: content key (if any), delivery, jobs; fail each in turn.
      for (let failing = 0; failing < 3; failing += 1) {
        const b = dynamoBench();
        b.table.failNext('Put', new Error('ProvisionedThroughputExceededException'), failing);
        const first = await outcome(acceptWebhook(b.ingest, request));
        const retry = await outcome(acceptWebhook(b.ingest, request));
        for (const answer of [first, retry].filter((a) => a.status < 300)) {
          expect(answer.jobIds.length).toBeGreaterThan(0);
          for (const jobId of answer.jobIds) expect(b.table.items.has(`job#${jobId}`)).toBe(true);
        }
        expect(first.status).toBe(500);
        expect(retry.status).toBeLessThan(300);
        // Every job of the answer was sent, and no transaction was asked for.
        expect(b.queue.jobIds).toEqual(expect.arrayContaining(retry.jobIds));
        expect(b.table.sent.some((s) => s.name === 'TransactWrite')).toBe(false);
      }
    },
  );

  it("has its sender's retry write and send the jobs its first attempt could not (200 duplicate)", async () => {
    const b = dynamoBench();
    const request = signedWebhook('releases', { name: 'v1', repo: 'r', draft: false });
    // The delivery's put goes through; its second job's fails.
    b.table.failNext('Put', new Error('ProvisionedThroughputExceededException'), 2);
    await expect(acceptWebhook(b.ingest, request)).rejects.toMatchObject({ code: 'JOB_STORE_UNAVAILABLE' });
    expect(b.queue.jobIds).toEqual([]);
    const [deliveryId] = [...b.table.items.keys()].filter((k) => k.startsWith('delivery#'));
    expect(b.table.items.has('job#job-2')).toBe(false);
    const retry = await acceptWebhook(b.ingest, request);
    expect(retry).toEqual({
      status: 200,
      body: {
        deliveryId: deliveryId?.replace('delivery#releases#', ''),
        jobs: [
          { jobId: 'job-1', rule: 'notes' },
          { jobId: 'job-2', rule: 'changelog' },
        ],
        duplicate: true,
      },
    });
    expect(b.table.items.get('job#job-2')).toMatchObject({ status: 'queued' });
    expect(b.queue.jobIds.sort()).toEqual(['job-1', 'job-2']);
    // Complete: the reconciler has nothing left to do for it, and a later copy sends nothing more.
    expect(b.table.items.get(deliveryId ?? '')).toHaveProperty('enqueuedAt');
    await acceptWebhook(b.ingest, request);
    expect(b.queue.jobIds).toHaveLength(2);
  });

  it('has the reconciler complete it after its grace when the sender never retries', async () => {
    const b = dynamoBench();
    const request = signedWebhook('releases', { name: 'v2', repo: 'r', draft: false });
    b.table.failNext('Put', new Error('ProvisionedThroughputExceededException'), 2);
    await expect(acceptWebhook(b.ingest, request)).rejects.toMatchObject({ code: 'JOB_STORE_UNAVAILABLE' });
    const [deliveryKey] = [...b.table.items.keys()].filter((k) => k.startsWith('delivery#'));
    // The ingest's note reopened the delivery it wrote without all its jobs.
    expect(b.table.items.get(deliveryKey ?? '')).toHaveProperty('openPk');
    const deps = { jobs: b.jobs, queue: b.queue, log: b.log, leaseMs: 60_000, now: b.clock.now };
    await expect(reconcile(deps)).resolves.toMatchObject({ deliveriesCompleted: 0 });
    b.clock.advance(ENQUEUE_GRACE_MS + 1);
    await expect(reconcile(deps)).resolves.toMatchObject({ deliveriesCompleted: 1 });
    expect(b.table.items.get('job#job-2')).toMatchObject({ status: 'queued' });
    expect(b.queue.jobIds.sort()).toEqual(['job-1', 'job-2']);
  });

  it('lets a first attempt still writing meet its own retry: the job the retry wrote and a worker took is kept', async () => {
    let retried = false;
    const b = dynamoBench(async (item) => {
      if (item.kind !== 'job' || retried) return;
      retried = true;
      // Before the first attempt's job put: its sender's retry completes the delivery, a worker takes the job.
      const retry = await acceptWebhook(b.ingest, request);
      expect(retry.body).toMatchObject({ duplicate: true, jobs: [{ jobId: 'job-1' }] });
      const job = await b.jobs.getJob('job-1');
      if (job === undefined) throw new Error('the retry wrote no job');
      await b.jobs.updateJob(job, transitions.claim(job, 'worker', b.clock.ms + 60_000));
    });
    const request = signedWebhook('notes', { id: 'n-1', customer: 'A', number: '1' });
    const first = await acceptWebhook(b.ingest, request);
    expect(first).toMatchObject({ status: 202, body: { jobs: [{ jobId: 'job-1' }] } });
    expect(await b.jobs.getJob('job-1')).toMatchObject({ status: 'processing', version: 1 });
  });
});
