/**
 * A service that asks to wait longer than a worker's in-call retry budget (20 s) is not called sooner: the
 * job waits the Retry-After out in full through a delayed message, and that wait is not a failed attempt.
 */
import { postNote } from './helpers/reliability';
import { startTestStack, type TestStack } from './helpers/stack';

jest.setTimeout(120_000);

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack();
});

afterAll(async () => {
  await t?.dispose();
});

it('waits out a 25 s Retry-After on two answers in full and ends stored', async () => {
  t.emulator.resetStats();
  t.emulator.setFaults({ failNext: { count: 2, status: 429 }, retryAfterSeconds: 25 });
  // One job (an internal note), so every API call after a 429 is that job's.
  const answer = await postNote(t, { title: 'rate limited', body: 'waits it out' });
  const views = await t.waitForJobs(
    answer.body.jobs.map((job) => job.jobId),
    { timeoutMs: 110_000 },
  );
  expect(views.map((view) => view.status)).toEqual(answer.body.jobs.map(() => 'stored'));

  // Every API call after a 429 came at least the 25 s it asked for after it (the emulator's own clock).
  const api = t.emulator.stats().requests.filter((request) => request.path.startsWith('/v1.0/'));
  const limited = api.filter((request) => request.status === 429);
  expect(limited).toHaveLength(2);
  for (const refusal of limited) {
    const next = api.find((request) => request.at > refusal.at && request !== refusal);
    expect(next).toBeDefined();
    expect((next?.at ?? 0) - refusal.at).toBeGreaterThanOrEqual(25_000);
  }
  // Waiting is not failing: no attempt was counted against the job beyond the ones that ran.
  for (const view of views) expect(view.error).toBeUndefined();
});
