import fc from 'fast-check';
import { DocgenBadRequestError, DocgenError, DocgenUnavailableError } from '../../../functions/docgen/errors';
import {
  backoffDelay,
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
  type RetryEnvironment,
  type RetryInfo,
  withRetry,
} from '../../../functions/docgen/retry';

/** A retry environment whose clock advances only when the loop sleeps. */
function fakeEnv(
  overrides: Partial<RetryEnvironment> = {},
): RetryEnvironment & { slept: number[]; retries: RetryInfo[] } {
  let clock = 1_000_000;
  const slept: number[] = [];
  const retries: RetryInfo[] = [];
  return {
    policy: DEFAULT_RETRY_POLICY,
    sleep: async (ms) => {
      slept.push(ms);
      clock += ms;
    },
    random: () => 0.5,
    now: () => clock,
    onRetry: (info) => retries.push(info),
    ...overrides,
    slept,
    retries,
  };
}

describe('backoffDelay', () => {
  it('stays within [0, min(max, base * 2^(attempt-1))] for any attempt and random value (full jitter)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (attempt, r) => {
          const delay = backoffDelay(attempt, DEFAULT_RETRY_POLICY, () => r);
          const ceiling = Math.min(
            DEFAULT_RETRY_POLICY.maxDelayMs,
            DEFAULT_RETRY_POLICY.baseDelayMs * 2 ** (attempt - 1),
          );
          return delay >= 0 && delay <= ceiling;
        },
      ),
    );
  });

  it('doubles the ceiling per attempt until the maximum', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000 };
    const almostOne = () => 0.999_999;
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, policy, almostOne))).toEqual([
      99, 199, 399, 799, 999, 999,
    ]);
  });

  it('is zero when the random value is zero (the "full" in full jitter)', () => {
    expect(backoffDelay(4, DEFAULT_RETRY_POLICY, () => 0)).toBe(0);
  });
});

describe('parseRetryAfter', () => {
  it('reads delta seconds', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(' 0 ')).toBe(0);
  });

  it('reads an HTTP date relative to now', () => {
    const now = Date.parse('2024-05-01T10:00:00Z');
    expect(parseRetryAfter('Wed, 01 May 2024 10:00:07 GMT', now)).toBe(7000);
  });

  it('treats a date in the past as zero and garbage or absence as undefined', () => {
    const now = Date.parse('2024-05-01T10:00:00Z');
    expect(parseRetryAfter('Wed, 01 May 2024 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter('-5')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe('withRetry', () => {
  it('retries a retryable error until it succeeds, reporting each retry', async () => {
    const env = fakeEnv();
    let calls = 0;
    const result = await withRetry(
      'op',
      async () => {
        calls++;
        if (calls < 3) throw new DocgenUnavailableError('down', { status: 503 });
        return 'ok';
      },
      env,
    );
    expect(result).toBe('ok');
    expect(calls).toBe(3);
    expect(env.retries.map((r) => [r.attempt, r.code, r.status])).toEqual([
      [1, 'DOCGEN_UNAVAILABLE', 503],
      [2, 'DOCGEN_UNAVAILABLE', 503],
    ]);
  });

  it('stops at maxAttempts and says how many attempts were made', async () => {
    const env = fakeEnv({ policy: { ...DEFAULT_RETRY_POLICY, maxAttempts: 4 } });
    let calls = 0;
    const failure = withRetry(
      'op',
      async () => {
        calls++;
        throw new DocgenUnavailableError('down');
      },
      env,
    );
    await expect(failure).rejects.toMatchObject({ code: 'DOCGEN_UNAVAILABLE', attempts: 4, retryable: true });
    expect(calls).toBe(4);
    expect(env.slept).toHaveLength(3);
  });

  it('never retries a non-retryable error', async () => {
    const env = fakeEnv();
    let calls = 0;
    await expect(
      withRetry(
        'op',
        async () => {
          calls++;
          throw new DocgenBadRequestError('bad', { status: 400 });
        },
        env,
      ),
    ).rejects.toBeInstanceOf(DocgenBadRequestError);
    expect(calls).toBe(1);
    expect(env.slept).toEqual([]);
  });

  it('does not retry errors that are not client errors', async () => {
    const env = fakeEnv();
    let calls = 0;
    await expect(
      withRetry(
        'op',
        async () => {
          calls++;
          throw new Error('programming error');
        },
        env,
      ),
    ).rejects.toThrow('programming error');
    expect(calls).toBe(1);
  });

  it('waits at least Retry-After when it is longer than the jittered backoff', async () => {
    const env = fakeEnv();
    let calls = 0;
    await withRetry(
      'op',
      async () => {
        calls++;
        if (calls === 1)
          throw new DocgenError('DOCGEN_RATE_LIMITED', 'slow down', true, { retryAfterMs: 5000 });
        return 'ok';
      },
      env,
    );
    expect(env.slept).toEqual([5000]);
  });

  it('never calls sooner than Retry-After: a wait longer than the budget left ends the call with it', async () => {
    const env = fakeEnv({ policy: { ...DEFAULT_RETRY_POLICY, maxAttempts: 50, totalBudgetMs: 10_000 } });
    let calls = 0;
    const failure = withRetry(
      'op',
      async () => {
        calls++;
        throw new DocgenError('DOCGEN_RATE_LIMITED', 'slow down', true, { retryAfterMs: 6000 });
      },
      env,
    );
    await expect(failure).rejects.toMatchObject({ attempts: 2, retryAfterMs: 6000 });
    // 6000 waited in full; the second answer asks for 6000 more, past the 4000 left: no third call.
    expect(env.slept).toEqual([6000]);
    expect(calls).toBe(2);
  });

  it('caps a jittered backoff (no Retry-After) to the remaining budget and gives up once it is spent', async () => {
    const env = fakeEnv({
      policy: {
        ...DEFAULT_RETRY_POLICY,
        maxAttempts: 50,
        totalBudgetMs: 10_000,
        baseDelayMs: 8000,
        maxDelayMs: 8000,
      },
      random: () => 0.999,
    });
    let calls = 0;
    const failure = withRetry(
      'op',
      async () => {
        calls++;
        throw new DocgenError('DOCGEN_UNAVAILABLE', '503', true);
      },
      env,
    );
    await expect(failure).rejects.toMatchObject({ code: 'DOCGEN_UNAVAILABLE' });
    expect(env.slept.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(10_000);
    expect(calls).toBeGreaterThanOrEqual(2);
  });
});
