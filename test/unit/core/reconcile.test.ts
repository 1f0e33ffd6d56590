import { acceptWebhook } from '../../../functions/core/accept-delivery';
import { JobConflictError } from '../../../functions/core/errors';
import { newJobRecord, transitions } from '../../../functions/core/job';
import { completeOutbox } from '../../../functions/core/outbox';
import { reconcile, releaseAbandonedLeases } from '../../../functions/core/reconcile';
import { memoryBench, recordedInSteps, signedWebhook } from './support';

type Bench = ReturnType<typeof memoryBench>;
const deps = (b: Bench) => ({ jobs: b.jobs, queue: b.queue, log: b.log, leaseMs: 60_000, now: b.clock.now });

/** What an ingest that died right after writing the delivery leaves: the record, no job, no message. */
async function crashedDelivery(b: Bench, deliveryId: string): Promise<string> {
  const plan = { jobId: `job-${deliveryId}`, rule: 'invoice', templateId: '9001' };
  await b.jobs.createDelivery(
    {
      integration: 'notes',
      deliveryId,
      receivedAt: new Date(b.clock.ms).toISOString(),
      jobs: [plan],
      sealedPayload: 's',
    },
    [],
  );
  return plan.jobId;
}

/** A delivery accepted and then closed by an earlier pass (its grace over): only its job is left open. */
async function acceptedAndClosed(b: Bench, id: string) {
  const answer = await acceptWebhook(b.ingest, signedWebhook('notes', { id, customer: 'A', number: '1' }));
  await b.jobs.markDeliveryEnqueued('notes', id, new Date(b.clock.ms).toISOString());
  return answer;
}

describe('completeOutbox', () => {
  it('writes the missing jobs, sends their messages and marks the delivery enqueued, idempotently', async () => {
    const b = memoryBench();
    const jobId = await crashedDelivery(b, 'd-1');
    const delivery = await b.jobs.getDelivery('notes', 'd-1');
    await completeOutbox(b, delivery as NonNullable<typeof delivery>, b.clock.ms);
    await completeOutbox(b, delivery as NonNullable<typeof delivery>, b.clock.ms);
    expect((await b.jobs.getJob(jobId))?.status).toBe('queued');
    expect(b.queue.jobIds).toEqual([jobId, jobId]);
    // Once a worker has picked the job up, completing again sends nothing.
    const job = (await b.jobs.getJob(jobId)) as NonNullable<Awaited<ReturnType<typeof b.jobs.getJob>>>;
    await b.jobs.updateJob(job, transitions.claim(job, 'worker', b.clock.ms + 60_000));
    await completeOutbox(b, delivery as NonNullable<typeof delivery>, b.clock.ms);
    expect(b.queue.jobIds).toEqual([jobId, jobId]);
    expect((await b.jobs.getDelivery('notes', 'd-1'))?.enqueuedAt).toBeDefined();
    expect(b.jobs.writes.filter((w) => w.operation === 'ensureJobs')).toHaveLength(1);
  });

  it('leaves the delivery open when the queue fails, so it is completed later', async () => {
    const b = memoryBench();
    await crashedDelivery(b, 'd-2');
    const delivery = await b.jobs.getDelivery('notes', 'd-2');
    b.queue.failNext(new Error('down'));
    await expect(completeOutbox(b, delivery as NonNullable<typeof delivery>, b.clock.ms)).rejects.toThrow(
      'down',
    );
    expect((await b.jobs.getDelivery('notes', 'd-2'))?.enqueuedAt).toBeUndefined();
  });
});

describe('reconcile', () => {
  it('leaves everything alone while leases run', async () => {
    const b = memoryBench();
    await acceptWebhook(b.ingest, signedWebhook('notes', { id: 'n-1', customer: 'A', number: '1' }));
    await crashedDelivery(b, 'd-3');
    expect(await reconcile(deps(b))).toEqual({ deliveriesCompleted: 0, jobsResent: 0, jobsWaiting: 0 });
  });

  it('completes a delivery whose messages were never sent, once past its grace period', async () => {
    const b = memoryBench();
    const jobId = await crashedDelivery(b, 'd-4');
    b.clock.advance(61_000);
    expect(await reconcile(deps(b))).toEqual({ deliveriesCompleted: 1, jobsResent: 0, jobsWaiting: 0 });
    expect(b.queue.jobIds).toEqual([jobId]);
    // Its job is new and within its first pickup window: the next pass leaves it alone.
    expect(await reconcile(deps(b))).toEqual({ deliveriesCompleted: 0, jobsResent: 0, jobsWaiting: 0 });
  });

  it('sends a stranded job again with a fresh lease, so one pass does not resend it twice', async () => {
    const b = memoryBench();
    const answer = await acceptWebhook(
      b.ingest,
      signedWebhook('notes', { id: 'n-2', customer: 'A', number: '1' }),
    );
    const jobId = answer.body.jobs[0]?.jobId as string;
    // Recorded with its job, the delivery is closed: the job's own first-pickup lease is what runs out.
    b.clock.advance(61_000);
    expect(await reconcile(deps(b))).toEqual({ deliveriesCompleted: 0, jobsResent: 0, jobsWaiting: 0 });
    b.clock.advance(15 * 60_000);
    expect(await reconcile(deps(b))).toEqual({ deliveriesCompleted: 0, jobsResent: 1, jobsWaiting: 0 });
    expect(b.queue.jobIds).toEqual([jobId, jobId]);
    expect((await b.jobs.getJob(jobId))?.leaseUntil).toBe(b.clock.ms + 60_000);
    expect(await reconcile(deps(b))).toEqual({ deliveriesCompleted: 0, jobsResent: 0, jobsWaiting: 0 });
  });

  it('closes a delivery past its grace without sending its waiting job while the queue holds messages', async () => {
    const b = memoryBench();
    const answer = await acceptWebhook(
      b.ingest,
      signedWebhook('notes', { id: 'n-g', customer: 'A', number: '1' }),
    );
    recordedInSteps(b.jobs, 'notes', 'n-g');
    b.queue.held = { visible: 5, inFlight: 2, delayed: 0 };
    b.clock.advance(61_000);
    expect(await reconcile(deps(b))).toEqual({ deliveriesCompleted: 1, jobsResent: 0, jobsWaiting: 0 });
    expect(b.queue.jobIds).toEqual([answer.body.jobs[0]?.jobId]);
    expect((await b.jobs.getDelivery('notes', 'n-g'))?.enqueuedAt).toBeDefined();
  });

  it('leaves a job past its lease alone while the queue holds messages it may be waiting in', async () => {
    const b = memoryBench();
    await acceptedAndClosed(b, 'n-w');
    b.queue.held = { visible: 12, inFlight: 4, delayed: 0 };
    const writes = b.jobs.writes.length;
    b.clock.advance(16 * 60_000);
    expect(await reconcile(deps(b))).toEqual({ deliveriesCompleted: 0, jobsResent: 0, jobsWaiting: 1 });
    expect(b.queue.jobIds).toHaveLength(1);
    expect(b.jobs.writes).toHaveLength(writes);
  });

  it('sends a waiting job again once it has waited maxQueueWaitMs past its lease, whatever the queue holds', async () => {
    const b = memoryBench();
    const answer = await acceptedAndClosed(b, 'n-l');
    const jobId = answer.body.jobs[0]?.jobId as string;
    b.queue.held = { visible: 0, inFlight: 0, delayed: 3 };
    b.clock.advance(15 * 60_000 + 10 * 60_000 - 1);
    const waited = { ...deps(b), maxQueueWaitMs: 10 * 60_000 };
    expect(await reconcile(waited)).toEqual({ deliveriesCompleted: 0, jobsResent: 0, jobsWaiting: 1 });
    b.clock.advance(1);
    expect(await reconcile(waited)).toEqual({ deliveriesCompleted: 0, jobsResent: 1, jobsWaiting: 0 });
    expect(b.queue.jobIds).toEqual([jobId, jobId]);
  });

  it('sends a job past its lease again at once when the queue is empty (its message is gone)', async () => {
    const b = memoryBench();
    await acceptedAndClosed(b, 'n-e');
    b.queue.held = { visible: 0, inFlight: 0, delayed: 0 };
    b.clock.advance(15 * 60_000 + 1);
    expect(await reconcile(deps(b))).toEqual({ deliveriesCompleted: 0, jobsResent: 1, jobsWaiting: 0 });
  });

  it('at start-up (before in the future) sends every open job again, whatever the queue holds now', async () => {
    const b = memoryBench();
    await acceptedAndClosed(b, 'n-s');
    b.queue.held = { visible: 3, inFlight: 0, delayed: 0 };
    expect(await reconcile(deps(b), Number.MAX_SAFE_INTEGER)).toEqual({
      deliveriesCompleted: 0,
      jobsResent: 1,
      jobsWaiting: 0,
    });
  });

  it('sends every stranded job again when the queue cannot say what it holds', async () => {
    const b = memoryBench();
    await acceptedAndClosed(b, 'n-u');
    b.queue.held = { visible: 5, inFlight: 0, delayed: 0 };
    b.clock.advance(16 * 60_000);
    b.queue.failNext(new Error('GetQueueAttributes denied'));
    expect(await reconcile(deps(b))).toEqual({ deliveriesCompleted: 0, jobsResent: 1, jobsWaiting: 0 });
  });

  it('does not resend a job a worker moved on meanwhile', async () => {
    const b = memoryBench();
    await acceptWebhook(b.ingest, signedWebhook('notes', { id: 'n-3', customer: 'A', number: '1' }));
    b.clock.advance(61_000);
    await reconcile(deps(b));
    b.clock.advance(16 * 60_000);
    b.jobs.failNext('updateJob', new JobConflictError('x'));
    expect(await reconcile(deps(b))).toEqual({ deliveriesCompleted: 0, jobsResent: 0, jobsWaiting: 0 });
  });

  it('stops on any other table failure', async () => {
    const b = memoryBench();
    await acceptWebhook(b.ingest, signedWebhook('notes', { id: 'n-4', customer: 'A', number: '1' }));
    b.clock.advance(61_000);
    await reconcile(deps(b));
    b.clock.advance(16 * 60_000);
    b.jobs.failNext('updateJob', new Error('table down'));
    await expect(reconcile(deps(b))).rejects.toThrow('table down');
  });

  it('leaves a failed job alone (a final job is never stranded)', async () => {
    const b = memoryBench();
    const job = newJobRecord('notes', 'd', 'x', b.clock.ms, {
      jobId: 'j-f',
      rule: 'invoice',
      templateId: '9001',
    });
    await b.jobs.ensureJobs([{ ...job, status: 'failed' }]);
    b.clock.advance(60 * 60_000);
    expect(await reconcile(deps(b), Number.MAX_SAFE_INTEGER)).toEqual({
      deliveriesCompleted: 0,
      jobsResent: 0,
      jobsWaiting: 0,
    });
    expect((await b.jobs.listJobs({ status: 'failed' })).jobs).toHaveLength(1);
  });

  it('resends each job of a completed delivery once per pass', async () => {
    const b = memoryBench();
    const jobId = await crashedDelivery(b, 'd-5');
    // The job record exists and is stranded too: the delivery's completion already sends it.
    await b.jobs.ensureJobs([
      newJobRecord('notes', 'd-5', 'x', b.clock.ms - 20 * 60_000, {
        jobId,
        rule: 'invoice',
        templateId: '9001',
      }),
    ]);
    b.clock.advance(61_000);
    expect(await reconcile(deps(b))).toEqual({ deliveriesCompleted: 1, jobsResent: 0, jobsWaiting: 0 });
    expect(b.queue.jobIds).toEqual([jobId]);
  });
});

describe('releaseAbandonedLeases', () => {
  it('sends again, lease cleared, each job a dead worker held, and leaves unclaimed and final jobs alone', async () => {
    const b = memoryBench();
    const [held, waiting, done] = await Promise.all(
      ['r-1', 'r-2', 'r-3'].map(async (id) => (await acceptedAndClosed(b, id)).body.jobs[0]?.jobId as string),
    );
    const claim = async (jobId: string) => {
      const job = (await b.jobs.getJob(jobId)) as NonNullable<Awaited<ReturnType<typeof b.jobs.getJob>>>;
      return b.jobs.updateJob(job, transitions.claim(job, 'dead-worker', b.clock.ms + 60_000));
    };
    await claim(held as string);
    const finished = await claim(done as string);
    await b.jobs.updateJob(finished, transitions.fail(finished, { code: 'X', message: 'x' }));
    const sentBefore = b.queue.jobIds.length;

    expect(await releaseAbandonedLeases(deps(b))).toBe(1);

    expect(b.queue.jobIds.slice(sentBefore)).toEqual([held]);
    const released = await b.jobs.getJob(held as string);
    expect(released).toMatchObject({ status: 'processing', leaseUntil: b.clock.ms + 60_000 });
    expect(released?.leaseOwner).toBeUndefined();
    expect((await b.jobs.getJob(waiting as string))?.leaseOwner).toBeUndefined();
    // Nothing is held any more: a second pass sends nothing.
    expect(await releaseAbandonedLeases(deps(b))).toBe(0);
  });
});
