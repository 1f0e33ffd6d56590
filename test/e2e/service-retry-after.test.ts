/**
 * A service that asks to wait longer than a worker's in-call retry budget (20 s by default; 2 s here, so that
 * the waits are seconds) is not called sooner: the job waits the Retry-After out in full through a delayed
 * message, and that wait is not a failed attempt.
 */
import { postNote } from './helpers/reliability';
import { startTestStack, type TestStack } from './helpers/stack';

jest.setTimeout(60_000);

/** The worker's budget for one service call, its retries and their waits included. */
const BUDGET_MS = 2_000;
/** What the service asks: longer than the budget, so the client does not wait it out in place. */
const RETRY_AFTER_SECONDS = 4;

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack({ docgenRetryBudgetMs: BUDGET_MS });
});

afterAll(async () => {
  await t?.dispose();
});

it('waits out a Retry-After longer than the retry budget, on two answers, in full and ends stored', async () => {
  expect(RETRY_AFTER_SECONDS * 1000).toBeGreaterThan(BUDGET_MS);
  t.emulator.resetStats();
  t.emulator.setFaults({ failNext: { count: 2, status: 429 }, retryAfterSeconds: RETRY_AFTER_SECONDS });
  // One job (an internal note), so every API call after a 429 is that job's.
  const answer = await postNote(t, { title: 'rate limited', body: 'waits it out' });
  const views = await t.waitForJobs(
    answer.body.jobs.map((job) => job.jobId),
    { timeoutMs: 50_000 },
  );
  expect(views.map((view) => view.status)).toEqual(answer.body.jobs.map(() => 'stored'));

  // Every API call after a 429 came at least the time it asked for after it (the emulator's own clock).
  const api = t.emulator.stats().requests.filter((request) => request.path.startsWith('/v1.0/'));
  const limited = api.filter((request) => request.status === 429);
  expect(limited).toHaveLength(2);
  for (const refusal of limited) {
    const next = api.find((request) => request.at > refusal.at && request !== refusal);
    expect(next).toBeDefined();
    expect((next?.at ?? 0) - refusal.at).toBeGreaterThanOrEqual(RETRY_AFTER_SECONDS * 1000);
  }
  // The waits were not spent in a call (within the budget the client would have waited in place): each 429 ended
  // its attempt, and the job came back by a delayed message for the next.
  for (const view of views) {
    expect(view.attempts).toBe(3);
    expect(view.attemptErrors?.map((entry) => entry.code)).toEqual([
      'DOCGEN_RATE_LIMITED',
      'DOCGEN_RATE_LIMITED',
    ]);
  }
  // Waiting is not failing: no attempt was counted against the job beyond the ones that ran.
  for (const view of views) expect(view.error).toBeUndefined();
});
