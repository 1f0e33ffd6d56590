import { DocrelayError } from '../../../functions/commons/errors';
import {
  backoffSeconds,
  decideCopyRetry,
  decideRetry,
  describeFailure,
  type FailureFacts,
  fitDelayToLinks,
  isServiceOutage,
  MAX_BACKOFF_SECONDS,
} from '../../../functions/core/retry-policy';
import {
  DocgenBadRequestError,
  DocgenDownloadCutError,
  DocgenNetworkError,
  DocgenRateLimitedError,
  DocgenTimeoutError,
  DocgenUnavailableError,
} from '../../../functions/docgen/errors';

const facts = (overrides: Partial<FailureFacts>): FailureFacts => ({
  error: new DocgenUnavailableError('503'),
  receiveCount: 1,
  maxReceiveCount: 3,
  attempts: 1,
  receivedAtMs: 0,
  nowMs: 1000,
  outageBudgetMs: 10_000,
  canRequeue: true,
  retryBaseSeconds: 5,
  random: 0.5,
  ...overrides,
});

describe('backoffSeconds', () => {
  it('grows exponentially with full jitter', () => {
    expect(backoffSeconds(new Error(), 1, 5, 0.5)).toBe(3);
    expect(backoffSeconds(new Error(), 3, 5, 0.5)).toBe(10);
    expect(backoffSeconds(new Error(), 3, 5, 0.999)).toBe(20);
  });

  it('waits at least a second, at least what a rate limit asked for, and never past the ceiling', () => {
    expect(backoffSeconds(new Error(), 1, 5, 0)).toBe(1);
    const limited = new DocgenRateLimitedError('429', { retryAfterMs: 42_000 });
    expect(backoffSeconds(limited, 1, 5, 0)).toBe(42);
    expect(backoffSeconds(new Error(), 60, 5, 0.999)).toBe(MAX_BACKOFF_SECONDS);
    expect(backoffSeconds(new DocgenRateLimitedError('429', { retryAfterMs: 9e9 }), 1, 5, 0)).toBe(
      MAX_BACKOFF_SECONDS,
    );
  });

  it('waits at least what a 5xx asked for with its Retry-After (a service in maintenance)', () => {
    expect(backoffSeconds(new DocgenUnavailableError('503', { retryAfterMs: 30_000 }), 1, 5, 0)).toBe(30);
    expect(backoffSeconds(new DocgenUnavailableError('503'), 1, 5, 0)).toBe(1);
  });
});

describe('decideRetry', () => {
  it('retries a retryable error while receives remain, marking service outages', () => {
    expect(decideRetry(facts({}))).toMatchObject({
      kind: 'retry',
      outage: true,
      reason: { code: 'DOCGEN_UNAVAILABLE' },
    });
    const other = decideRetry(
      facts({ error: new DocrelayError('QUEUE_UNAVAILABLE', 'q', { retryable: true }) }),
    );
    expect(other).toMatchObject({ kind: 'retry', outage: false });
  });

  it('takes an unknown error as retryable, without leaking its text', () => {
    expect(decideRetry(facts({ error: new TypeError('secret-ish detail') }))).toMatchObject({
      kind: 'retry',
      reason: { code: 'INTERNAL', message: 'unexpected error (see the worker logs)' },
    });
  });

  it('fails a non-retryable error at once', () => {
    expect(decideRetry(facts({ error: new DocgenBadRequestError('400 bad') }))).toEqual({
      kind: 'fail',
      error: { code: 'DOCGEN_BAD_REQUEST', message: '400 bad' },
    });
  });

  it('requeues a service outage at the last receive while the outage budget lasts', () => {
    expect(decideRetry(facts({ receiveCount: 3 }))).toMatchObject({ kind: 'requeue' });
    expect(decideRetry(facts({ receiveCount: 3, error: new DocgenTimeoutError('t') }))).toMatchObject({
      kind: 'requeue',
    });
  });

  it('waits out a Retry-After in full with a delayed message, at any receive', () => {
    const limited = new DocgenRateLimitedError('429', { retryAfterMs: 25_000 });
    expect(decideRetry(facts({ error: limited }))).toMatchObject({ kind: 'requeue', delaySeconds: 25 });
    expect(decideRetry(facts({ error: limited, canRequeue: false }))).toMatchObject({
      kind: 'retry',
      delaySeconds: 25,
    });
    // A 5xx that says when to come back is waited out the same way (the client gave up on it at once when
    // the wait was longer than its own budget).
    const maintenance = new DocgenUnavailableError('503', { retryAfterMs: 30_000 });
    expect(decideRetry(facts({ error: maintenance }))).toMatchObject({ kind: 'requeue', delaySeconds: 30 });
    const forever = new DocgenRateLimitedError('429', { retryAfterMs: 86_400_000 });
    expect(decideRetry(facts({ error: forever }))).toMatchObject({
      kind: 'requeue',
      delaySeconds: MAX_BACKOFF_SECONDS,
    });
  });

  it('gives up at the last receive when the budget is spent, requeueing is impossible, or it is no outage', () => {
    for (const f of [
      facts({ receiveCount: 3, error: new DocgenDownloadCutError('the connection broke off') }),
      facts({ receiveCount: 3, nowMs: 20_000 }),
      facts({ receiveCount: 3, canRequeue: false }),
      facts({ receiveCount: 3, error: new DocrelayError('X', 'x', { retryable: true }) }),
    ]) {
      const decision = decideRetry(f);
      expect(decision).toMatchObject({ kind: 'fail', error: { code: 'RETRIES_EXHAUSTED' } });
      expect(decision.kind === 'fail' && decision.lastError).toBeTruthy();
    }
  });

  it("counts the job's attempts in its final error when a requeue restarted the receive count", () => {
    const decision = decideRetry(facts({ receiveCount: 3, attempts: 9, canRequeue: false }));
    expect(decision).toMatchObject({
      kind: 'fail',
      error: { message: expect.stringMatching(/^gave up after 9 attempts: /) },
    });
  });

  it('keeps the backoff growing with attempts after a requeue restarted the receive count', () => {
    const early = decideRetry(facts({ receiveCount: 1, attempts: 1, random: 0.999 }));
    const late = decideRetry(facts({ receiveCount: 1, attempts: 6, random: 0.999 }));
    expect(early.kind === 'retry' && late.kind === 'retry' && late.delaySeconds > early.delaySeconds).toBe(
      true,
    );
  });
});

describe('isServiceOutage and describeFailure', () => {
  it('names 429, 5xx, timeouts and network errors as outages', () => {
    expect(isServiceOutage(new DocgenNetworkError('n'))).toBe(true);
    // A download the service answered and then broke off is the copy's failure, not an outage.
    expect(isServiceOutage(new DocgenDownloadCutError('cut'))).toBe(false);
    expect(isServiceOutage(new DocgenRateLimitedError('r'))).toBe(true);
    expect(isServiceOutage(new DocgenBadRequestError('b'))).toBe(false);
  });

  it('cuts long messages', () => {
    expect(describeFailure(new DocrelayError('C', 'x'.repeat(5000))).message).toHaveLength(1000);
  });
});

describe('decideCopyRetry', () => {
  const truncated = new DocrelayError('COPY_SIZE_MISMATCH', 'short', { retryable: true });
  it('downloads again after a short pause that ends well before the link expires', () => {
    expect(decideCopyRetry({ error: truncated, failures: 1, linkRemainingMs: 3_600_000 })).toEqual({
      kind: 'redownload',
      pauseMs: 250,
    });
    expect(decideCopyRetry({ error: truncated, failures: 2, linkRemainingMs: 2_000 })).toEqual({
      kind: 'redownload',
      pauseMs: 500,
    });
  });
  it('downloads again at once when the link should not outlive the pause (only a refusal regenerates)', () => {
    expect(decideCopyRetry({ error: truncated, failures: 2, linkRemainingMs: 1_999 })).toEqual({
      kind: 'redownload',
      pauseMs: 0,
    });
    expect(decideCopyRetry({ error: truncated, failures: 1, linkRemainingMs: -5 })).toEqual({
      kind: 'redownload',
      pauseMs: 0,
    });
  });
  it("leaves rate limits (their Retry-After), errors that are not retryable and a third failure to the job's retry", () => {
    const limited = new DocgenRateLimitedError('429', { retryAfterMs: 1000 });
    expect(decideCopyRetry({ error: limited, failures: 1, linkRemainingMs: 3_600_000 }).kind).toBe('settle');
    const bad = new DocgenBadRequestError('400');
    expect(decideCopyRetry({ error: bad, failures: 1, linkRemainingMs: 3_600_000 }).kind).toBe('settle');
    const maintenance = new DocgenUnavailableError('503', { retryAfterMs: 5_000 });
    expect(decideCopyRetry({ error: maintenance, failures: 1, linkRemainingMs: 3_600_000 }).kind).toBe(
      'settle',
    );
    const blip = new DocgenUnavailableError('503');
    expect(decideCopyRetry({ error: blip, failures: 1, linkRemainingMs: 3_600_000 }).kind).toBe('redownload');
    expect(decideCopyRetry({ error: truncated, failures: 3, linkRemainingMs: 3_600_000 }).kind).toBe(
      'settle',
    );
  });
});

describe('fitDelayToLinks', () => {
  const down = new DocrelayError('STORAGE_WRITE_FAILED', 'down', { retryable: true });
  it('keeps a backoff that ends well before the links expire', () => {
    expect(fitDelayToLinks(10, down, 3_600_000)).toBe(10);
  });
  it('shortens one that would not, to a quarter of the links’ remaining life', () => {
    expect(fitDelayToLinks(30, down, 20_000)).toBe(5);
  });
  it('keeps the backoff when not even a second fits (the next attempt regenerates without trying)', () => {
    expect(fitDelayToLinks(30, down, 3_000)).toBe(30);
  });
  it('never cuts a Retry-After short', () => {
    expect(fitDelayToLinks(30, new DocgenRateLimitedError('429', { retryAfterMs: 30_000 }), 20_000)).toBe(30);
    expect(fitDelayToLinks(30, new DocgenUnavailableError('503', { retryAfterMs: 30_000 }), 20_000)).toBe(30);
  });
});
