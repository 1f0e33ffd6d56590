/**
 * A job its worker dies on every time (a timeout, out of memory) never reaches the worker's failure handling:
 * each attempt claims it and vanishes. Past `jobs.maxAttempts` the next claim fails it with
 * ATTEMPTS_EXHAUSTED, publishes Document Failed, parks its message in the dead-letter queue, and the
 * reconciler leaves it alone from then on.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { transitions } from '../../functions/core/job';
import { readSample, startTestStack, type TestStack } from './helpers/stack';
import { waitUntil } from './helpers/wait';

jest.setTimeout(60_000);

let t: TestStack;

beforeAll(async () => {
  // The job's message stays in the queue here (no worker runs): a wait of 0 makes the reconciler take a job
  // past its lease as lost at once, as it does for a message SQS dead-lettered once the wait has passed.
  t = await startTestStack({ startWorkers: false, maxQueueWaitMs: 0 });
});

afterAll(async () => {
  await t?.dispose();
});

it('fails a job whose attempts all died with ATTEMPTS_EXHAUSTED, and the reconciler stops sending it', async () => {
  const answer = await t.postGithub(await readSample('github-release-published.json'));
  const jobId = answer.body.jobs[0]?.jobId as string;
  const maxAttempts = t.stack.config.config.jobs.maxAttempts;
  // What a worker that dies mid-attempt leaves behind, maxAttempts times: a claim whose lease then runs out.
  for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
    const job = await t.stack.jobs.getJob(jobId);
    if (job === undefined) throw new Error('job missing');
    await t.stack.jobs.updateJob(job, transitions.claim(job, `dead-worker-${attempt}`, Date.now() - 1));
  }
  // The reconciler finds it stranded (every lease ran out) and sends it again; the next claim is one too many.
  expect(await t.stack.reconcileNow()).toMatchObject({ jobsResent: 1 });
  t.stack.startWorkers();

  const [view, ...others] = await t.waitForJobs(answer.body.jobs.map((job) => job.jobId));
  // The delivery's other job (the release pack makes two) was never harmed: it is stored.
  expect(others.map((other) => other.status)).toEqual(['stored']);
  expect(view).toMatchObject({
    status: 'failed',
    attempts: maxAttempts,
    error: { code: 'ATTEMPTS_EXHAUSTED' },
  });
  expect(view?.error?.message).toMatch(/^attempts-exhausted: /);
  expect(t.emulator.stats().documentsCreated).toBe(others.length);

  const letters = await waitUntil('the job in the dead-letter queue', async () => {
    const drained = await t.drainDeadLetters();
    return drained.length > 0 ? drained : undefined;
  });
  expect(letters.map((letter) => letter.MessageAttributes?.reason?.StringValue)).toEqual([
    'ATTEMPTS_EXHAUSTED',
  ]);
  const events = (await readFile(join(t.dataDir, 'events.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(events.filter((e) => e.detail.jobId === jobId).map((e) => e['detail-type'])).toEqual([
    'Document Failed',
  ]);

  // Final: the reconciler no longer sees it, however late it runs (its delivery was closed by the first
  // pickup of the delivery's other job).
  expect(await t.stack.reconcileNow(Number.MAX_SAFE_INTEGER)).toEqual({
    deliveriesCompleted: 0,
    jobsResent: 0,
    jobsWaiting: 0,
  });
});
