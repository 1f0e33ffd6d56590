/**
 * No dual-write hole: the delivery record is the outbox. Whatever fails between writing a delivery and sending
 * its job messages (the queue refusing, the ingest dying, the queue emulator losing every message), the jobs
 * still run, once each: the sender's retry finishes the work instead of being told "duplicate" over nothing
 * queued, the reconciler completes what nobody retries, and a restarted stack resends what was open.
 */
import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoJobRepository } from '../../functions/adapters/dynamodb/job-table';
import { deliveryItem, jobItem } from '../../functions/adapters/dynamodb/keys';
import { type DeliveryRecord, FIRST_PICKUP_MS, newJobRecord } from '../../functions/core/job';
import { sealPayload } from '../../functions/core/payload';
import { LOCAL_SEALING_SECRET } from '../../local/stack/local-stack';
import {
  jobRecords,
  postNote,
  queueOutageSwitch,
  storedProblems,
  waitForFinal,
  waitForQueueDrained,
} from './helpers/reliability';
import { startTestStack, type TestStack } from './helpers/stack';
import { signStandardWebhooks } from './helpers/webhooks';

jest.setTimeout(60_000);

/** How long a new delivery may take to send its messages before the reconciler steps in (small here). */
const GRACE_MS = 1_000;

/**
 * What an ingest that died right after writing the delivery (and, with `withJobs`, its job records) leaves
 * behind: the records, no message. Written through a DynamoJobRepository with a short grace period.
 */
async function crashAfterRecording(
  t: TestStack,
  title: string,
  options: { withJobs: boolean },
  now = Date.now(),
): Promise<{ deliveryId: string; jobId: string }> {
  const store = new DynamoJobRepository(t.stack.clients.dynamodb, t.stack.aws.tableName, {
    enqueueGraceMs: GRACE_MS,
    now: () => now,
  });
  const deliveryId = `crash-${randomUUID()}`;
  const receivedAt = new Date(now).toISOString();
  const plan = { jobId: randomUUID(), rule: 'note', templateId: '9003' };
  const sealedPayload = sealPayload(
    { bodyText: JSON.stringify({ type: 'note.created', data: { title } }), headers: {}, query: {} },
    await t.secret(LOCAL_SEALING_SECRET),
    'internal-notes',
    deliveryId,
  );
  const delivery: DeliveryRecord = {
    integration: 'internal-notes',
    deliveryId,
    receivedAt,
    jobs: [plan],
    sealedPayload,
  };
  const jobs = options.withJobs ? [newJobRecord('internal-notes', deliveryId, receivedAt, now, plan)] : [];
  expect(await store.createDelivery(delivery, jobs)).toEqual({ created: true });
  return { deliveryId, jobId: plan.jobId };
}

describe('the window between recording a delivery and queueing its jobs', () => {
  let t: TestStack;

  beforeEach(async () => {
    // The interval reconciler stays out of the way: each test runs it when it means to.
    t = await startTestStack({ emulator: { seed: 11 }, reconcileIntervalMs: 600_000 });
  });

  afterEach(async () => {
    await t?.dispose();
  });

  it('answers 503 when the queue is down, and the sender’s retry queues the jobs instead of an empty duplicate', async () => {
    const outage = queueOutageSwitch(t.stack.clients.sqs);
    outage.down = true;
    const webhookId = `msg_${randomUUID()}`;
    const body = Buffer.from(JSON.stringify({ type: 'note.created', data: { title: 'Queue down' } }));
    const headers = signStandardWebhooks(body, await t.secret('docrelay/internal-notes-webhook'), webhookId);

    const refused = await fetch(`${t.url}/v1/hooks/internal-notes`, { method: 'POST', headers, body });

    expect(refused.status).toBe(503);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({
      status: 503,
      type: expect.any(String),
      title: expect.any(String),
    });
    expect(outage.refused).toBeGreaterThan(0);
    // The delivery is recorded (the outbox) but not marked enqueued; its job exists, and nothing is queued.
    const recorded = await t.stack.jobs.getDelivery('internal-notes', webhookId);
    expect(recorded?.enqueuedAt).toBeUndefined();
    expect(recorded?.jobs).toHaveLength(1);
    const jobId = recorded?.jobs[0]?.jobId as string;
    expect((await jobRecords(t, [jobId]))[0]?.status).toBe('queued');
    expect(await t.queueCounts()).toEqual({ visible: 0, inFlight: 0, delayed: 0 });

    // The sender tries again once the queue is back: a duplicate, but one that sent the messages.
    outage.down = false;
    const retried = await t.post('internal-notes', body, headers);

    expect(retried.status).toBe(200);
    expect(retried.body).toEqual({ deliveryId: webhookId, jobs: [{ jobId, rule: 'note' }], duplicate: true });
    const [job] = await waitForFinal(t, [jobId], 30_000);
    expect(job?.status).toBe('stored');
    // The delivery is marked by the reconciler once its grace is over; its stored job is not sent again.
    expect((await t.stack.jobs.getDelivery('internal-notes', webhookId))?.enqueuedAt).toBeUndefined();
    expect(await t.stack.reconcileNow(Date.now() + 61_000)).toEqual({
      deliveriesCompleted: 1,
      jobsResent: 0,
      jobsWaiting: 0,
    });
    expect((await t.stack.jobs.getDelivery('internal-notes', webhookId))?.enqueuedAt).toBeDefined();
    await waitForQueueDrained(t, 20_000);
    expect(t.emulator.stats().documentsCreated).toBe(1);
    expect(await storedProblems(t, t.emulator.stats(), [job as NonNullable<typeof job>])).toEqual([]);
  });

  it('answers 503 when a job cannot be written after its delivery, and the sender’s retry writes and queues it', async () => {
    // The table refuses the ingest's first job put (the delivery's put went through), as a network error would.
    const refused: string[] = [];
    t.stack.clients.dynamodb.middlewareStack.add(
      (next, context) => async (args) => {
        const kind = (args.input as { Item?: { kind?: unknown } }).Item?.kind;
        const isJob = kind === 'job' || (kind as { S?: unknown } | undefined)?.S === 'job';
        if (refused.length === 0 && context.commandName === 'PutItemCommand' && isJob) {
          refused.push(String(context.commandName));
          throw Object.assign(new Error('connect ECONNREFUSED (injected by the test)'), {
            name: 'NetworkingError',
          });
        }
        return next(args);
      },
      { step: 'initialize', name: 'testJobPutOutage' },
    );
    const webhookId = `msg_${randomUUID()}`;
    const first = await postNote(t, { title: 'Job put refused' }, webhookId);
    expect(first.status).toBe(503);
    expect(refused).toHaveLength(1);
    // The delivery is recorded without its job, and nothing is queued.
    const recorded = await t.stack.jobs.getDelivery('internal-notes', webhookId);
    const jobId = recorded?.jobs[0]?.jobId as string;
    expect(await t.stack.jobs.getJob(jobId)).toBeUndefined();
    expect(await t.queueCounts()).toEqual({ visible: 0, inFlight: 0, delayed: 0 });

    const retried = await postNote(t, { title: 'Job put refused' }, webhookId);

    expect(retried.status).toBe(200);
    expect(retried.body).toEqual({ deliveryId: webhookId, jobs: [{ jobId, rule: 'note' }], duplicate: true });
    const [job] = await waitForFinal(t, [jobId], 30_000);
    expect(job?.status).toBe('stored');
    expect((await t.stack.jobs.getDelivery('internal-notes', webhookId))?.enqueuedAt).toBeDefined();
    await waitForQueueDrained(t, 20_000);
    expect(t.emulator.stats().documentsCreated).toBe(1);
  });

  it('completes, after the grace period, deliveries an ingest recorded and then died on (with or without their jobs)', async () => {
    // Both recorded at one instant; the reconciler is asked about explicit instants (no sleep, no clock race).
    const recordedAt = Date.now();
    const noJobs = await crashAfterRecording(t, 'Crashed before the jobs', { withJobs: false }, recordedAt);
    const noMessages = await crashAfterRecording(
      t,
      'Crashed before the messages',
      { withJobs: true },
      recordedAt,
    );

    // Within the grace period a live ingest may still be sending: the reconciler leaves them alone.
    expect(await t.stack.reconcileNow(recordedAt + GRACE_MS - 1)).toEqual({
      deliveriesCompleted: 0,
      jobsResent: 0,
      jobsWaiting: 0,
    });
    // After it, the one recorded without its job is completed: its job written and sent.
    expect(await t.stack.reconcileNow(recordedAt + GRACE_MS + 1)).toEqual({
      deliveriesCompleted: 1,
      jobsResent: 0,
      jobsWaiting: 0,
    });
    await waitForFinal(t, [noJobs.jobId], 30_000);
    await waitForQueueDrained(t, 20_000);
    // The one recorded with its job is closed: its job's first-pickup lease (15 minutes) is what sends it.
    expect(await t.stack.reconcileNow(recordedAt + FIRST_PICKUP_MS + 1)).toEqual({
      deliveriesCompleted: 0,
      jobsResent: 1,
      jobsWaiting: 0,
    });
    const jobs = await waitForFinal(t, [noJobs.jobId, noMessages.jobId], 30_000);
    expect(jobs.map((job) => [job.status, job.documentsRequested])).toEqual([
      ['stored', 1],
      ['stored', 1],
    ]);
    await waitForQueueDrained(t, 20_000);
    expect(t.emulator.stats().documentsCreated).toBe(2);
    expect(await storedProblems(t, t.emulator.stats(), jobs)).toEqual([]);
    // Completed means out of the open index: the next pass has nothing to do.
    expect(await t.stack.reconcileNow(Date.now() + 3_600_000)).toEqual({
      deliveriesCompleted: 0,
      jobsResent: 0,
      jobsWaiting: 0,
    });
  });

  it('completes a delivery the sender never retried after its 503, through the reconciler', async () => {
    const outage = queueOutageSwitch(t.stack.clients.sqs);
    outage.down = true;
    const webhookId = `msg_${randomUUID()}`;
    const refused = await postNote(t, { title: 'Never retried' }, webhookId);
    expect(refused.status).toBe(503);
    outage.down = false;

    // The ingest's grace period is a minute: a pass that looks past it completes the delivery.
    const pass = await t.stack.reconcileNow(Date.now() + 61_000);

    expect(pass.deliveriesCompleted).toBe(1);
    const jobId = (await t.stack.jobs.getDelivery('internal-notes', webhookId))?.jobs[0]?.jobId as string;
    const [job] = await waitForFinal(t, [jobId], 30_000);
    expect(job?.status).toBe('stored');
    await waitForQueueDrained(t, 20_000);
    expect(t.emulator.stats().documentsCreated).toBe(1);
  });
});

/**
 * What a kill between the ingest's writes leaves (the delivery is put, closed, before its jobs): the delivery
 * recorded closed, with only its first `written` jobs.
 */
async function cutIngest(t: TestStack, title: string, jobCount: number, written: number) {
  const deliveryId = `cut-${randomUUID()}`;
  const now = Date.now();
  const plans = Array.from({ length: jobCount }, () => ({
    jobId: randomUUID(),
    rule: 'note',
    templateId: '9003',
  }));
  const delivery: DeliveryRecord = {
    integration: 'internal-notes',
    deliveryId,
    receivedAt: new Date(now).toISOString(),
    jobs: plans,
    sealedPayload: sealPayload(
      { bodyText: JSON.stringify({ type: 'note.created', data: { title } }), headers: {}, query: {} },
      await t.secret(LOCAL_SEALING_SECRET),
      'internal-notes',
      deliveryId,
    ),
  };
  const clock = { now: () => now, retentionSeconds: 86_400, enqueueGraceMs: GRACE_MS };
  const items = [
    deliveryItem(delivery, clock, false),
    ...plans
      .slice(0, written)
      .map((plan) =>
        jobItem(newJobRecord('internal-notes', deliveryId, delivery.receivedAt, now, plan), clock),
      ),
  ];
  for (const Item of items)
    await t.stack.clients.dynamodb.send(new PutCommand({ TableName: t.stack.aws.tableName, Item }));
  return plans.map((plan) => plan.jobId);
}

describe('when the queue emulator loses every message', () => {
  it('a restarted stack completes a delivery a kill cut short between its writes, one document a job', async () => {
    const first = await startTestStack({ emulator: { seed: 14 }, startWorkers: false });
    let second: TestStack | undefined;
    try {
      const none = await cutIngest(first, 'Cut before its job', 1, 0);
      const half = await cutIngest(first, 'Cut between its jobs', 2, 1);
      await first.stop();

      second = await startTestStack({ dataDir: first.dataDir, emulator: { seed: 15 } });
      const jobs = await waitForFinal(second, [...none, ...half], 30_000);

      expect(jobs.map((job) => job.status)).toEqual(['stored', 'stored', 'stored']);
      expect(second.lines.some((line) => /resumed \d+ open jobs and 2 deliveries/.test(line))).toBe(true);
      await waitForQueueDrained(second, 20_000);
      expect(second.emulator.stats().documentsCreated).toBe(3);
    } finally {
      await second?.stop();
      await first.dispose();
    }
  });

  it('a restarted stack resends every open job, one document each', async () => {
    const first = await startTestStack({ emulator: { seed: 12 }, startWorkers: false });
    let second: TestStack | undefined;
    try {
      const queued = await Promise.all(
        Array.from({ length: 3 }, async (_, i) => {
          const answer = await postNote(first, { title: `Queued ${i}` });
          expect(answer.status).toBe(202);
          return answer.body.jobs[0]?.jobId as string;
        }),
      );
      const crashed = await crashAfterRecording(first, 'Crashed before the messages', { withJobs: true });
      expect((await first.queueCounts()).visible).toBe(3);
      await first.stop();

      second = await startTestStack({ dataDir: first.dataDir, emulator: { seed: 13 } });
      const ids = [...queued, crashed.jobId];
      const jobs = await waitForFinal(second, ids, 30_000);

      // Recorded with their jobs, the four deliveries are closed: their open jobs, none of which a worker had
      // picked up, are what the restart sends again.
      expect(second.lines.some((line) => /resumed 4 open jobs and 0 deliveries/.test(line))).toBe(true);
      expect(jobs.map((job) => job.status)).toEqual(['stored', 'stored', 'stored', 'stored']);
      await waitForQueueDrained(second, 20_000);
      expect(second.emulator.stats().documentsCreated).toBe(4);
      expect(await storedProblems(second, second.emulator.stats(), jobs)).toEqual([]);
    } finally {
      await second?.stop();
      await first.dispose();
    }
  });
});
