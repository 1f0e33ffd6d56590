/**
 * Bounded retries for the service client: exponential backoff with full jitter, `Retry-After` honoured,
 * a cap on attempts and on the total time spent. Only errors marked `retryable` are tried again.
 */
import { DocgenAbortedError, DocgenError } from './errors';

/** How hard the client tries. */
export interface RetryPolicy {
  /** Requests per operation, the first included. @default 5 */
  readonly maxAttempts: number;
  /** Backoff base. @default 200 */
  readonly baseDelayMs: number;
  /** Largest backoff before jitter. @default 10_000 */
  readonly maxDelayMs: number;
  /** Time an operation may spend in all, waits included. @default 60_000 */
  readonly totalBudgetMs: number;
}

/** The default retry policy. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 200,
  maxDelayMs: 10_000,
  totalBudgetMs: 60_000,
};

/** What `onRetry` hears before each wait. */
export interface RetryInfo {
  readonly operation: string;
  /** The attempt that just failed (1 for the first request). */
  readonly attempt: number;
  readonly status?: number;
  readonly delayMs: number;
  readonly code: string;
}

/** The clock, randomness and hooks the retry loop uses; injectable for tests. */
export interface RetryEnvironment {
  readonly policy: RetryPolicy;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random: () => number;
  readonly now: () => number;
  readonly onRetry?: (info: RetryInfo) => void;
  readonly signal?: AbortSignal;
}

/** Full-jitter backoff after failed attempt `attempt` (1-based): `random * min(max, base * 2^(attempt-1))`. */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.floor(r * ceiling);
}

/** Milliseconds a `Retry-After` header asks for (delta seconds or an HTTP date), or undefined. */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // An HTTP date has a weekday and month name; anything else (like "-5") is not one.
  if (!/[a-z]/i.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Default sleep: a plain timer. */
export const defaultSleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    setTimeout(resolve, ms);
  });

/**
 * Runs `attempt` until it succeeds, fails with a non-retryable error, runs out of attempts or runs out of
 * time. The error thrown carries the number of attempts made.
 */
export async function withRetry<T>(
  operation: string,
  attempt: (attemptNumber: number) => Promise<T>,
  env: RetryEnvironment,
): Promise<T> {
  const started = env.now();
  const maxAttempts = Math.max(1, Math.floor(env.policy.maxAttempts));
  for (let n = 1; ; n++) {
    if (env.signal?.aborted)
      throw new DocgenAbortedError(`${operation}: aborted`, { operation, attempts: n - 1 });
    try {
      return await attempt(n);
    } catch (error) {
      if (error instanceof DocgenError) error.attempts = n;
      if (!(error instanceof DocgenError) || !error.retryable || n >= maxAttempts) throw error;
      const remaining = env.policy.totalBudgetMs - (env.now() - started);
      if (remaining <= 0) throw error;
      // The service asked to wait longer than this call may: give up now with its Retry-After, so the caller
      // waits it out in full (the worker defers the job) instead of calling again before the service said.
      if (error.retryAfterMs !== undefined && error.retryAfterMs > remaining) throw error;
      const jittered = backoffDelay(n, env.policy, env.random);
      const delayMs = Math.min(Math.max(error.retryAfterMs ?? 0, jittered), remaining);
      env.onRetry?.({ operation, attempt: n, status: error.status, delayMs, code: error.code });
      await env.sleep(delayMs);
    }
  }
}
