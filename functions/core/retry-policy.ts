/**
 * What a failed attempt means for its job, as pure functions: try again later (and when), carry the job on
 * with a new message (waiting out a service outage past the queue's receive count), or fail it for good.
 */
import { DocrelayError, isRetryable } from '../commons/errors';
import {
  DocgenNetworkError,
  DocgenRateLimitedError,
  DocgenTimeoutError,
  DocgenUnavailableError,
} from '../docgen/errors';
import { LinksExpiringError } from './errors';

/** A job error as it may be recorded: code and message, never a secret (messages are built without them). */
export interface FailureReason {
  readonly code: string;
  readonly message: string;
}

/** The facts a retry decision is made from. */
export interface FailureFacts {
  readonly error: unknown;
  /** How often this message was received. */
  readonly receiveCount: number;
  /** Receives of a message before the queue dead-letters it. */
  readonly maxReceiveCount: number;
  /** Attempts the job started so far (a requeued message starts its receive count over; attempts do not). */
  readonly attempts: number;
  /** Epoch ms the job's delivery was received, and now. */
  readonly receivedAtMs: number;
  readonly nowMs: number;
  /** How long after receipt a job keeps waiting out a service outage. */
  readonly outageBudgetMs: number;
  /** Whether a new message can be sent for the job (the worker can requeue). */
  readonly canRequeue: boolean;
  /** Base of the exponential backoff, in seconds. */
  readonly retryBaseSeconds: number;
  /** A number in [0, 1) for the jitter. */
  readonly random: number;
}

/** The decision. */
export type RetryDecision =
  | {
      readonly kind: 'retry';
      readonly delaySeconds: number;
      readonly reason: FailureReason;
      readonly outage: boolean;
    }
  | { readonly kind: 'requeue'; readonly delaySeconds: number; readonly reason: FailureReason }
  | { readonly kind: 'fail'; readonly error: FailureReason; readonly lastError?: FailureReason };

/** The longest wait between attempts (SQS's largest delay and visibility change that we use). */
export const MAX_BACKOFF_SECONDS = 900;

/** The longest wait after an attempt whose links kept being refused. */
export const LINKS_EXPIRING_MAX_DELAY_SECONDS = 5;

/** A job error as recorded: a docrelay error's code and message; anything else says only "unexpected". */
export function describeFailure(error: unknown): FailureReason {
  if (error instanceof DocrelayError) return { code: error.code, message: error.message.slice(0, 1000) };
  return { code: 'INTERNAL', message: 'unexpected error (see the worker logs)' };
}

/** The service is unavailable or limiting us (not a fault of the job): 429, 5xx, a timeout, the network. */
export const isServiceOutage = (error: unknown): boolean =>
  error instanceof DocgenRateLimitedError ||
  error instanceof DocgenUnavailableError ||
  error instanceof DocgenTimeoutError ||
  error instanceof DocgenNetworkError;

/** The service's Retry-After on a rate limit or an unavailable answer (5xx), in ms; undefined without one. */
export function askedRetryAfterMs(error: unknown): number | undefined {
  return error instanceof DocgenRateLimitedError || error instanceof DocgenUnavailableError
    ? error.retryAfterMs
    : undefined;
}

/** The service asked us to back off: any rate limit, or another answer that gave a Retry-After. */
const backsOff = (error: unknown): boolean =>
  error instanceof DocgenRateLimitedError || askedRetryAfterMs(error) !== undefined;

/**
 * Exponential backoff with full jitter over `failures` (at least 1 s), at least what the service asked for
 * (askedRetryAfterMs), at most MAX_BACKOFF_SECONDS.
 */
export function backoffSeconds(
  error: unknown,
  failures: number,
  baseSeconds: number,
  random: number,
): number {
  const ceiling = Math.min(MAX_BACKOFF_SECONDS, baseSeconds * 2 ** Math.min(30, Math.max(0, failures - 1)));
  const jittered = Math.ceil(random * ceiling);
  const asked = (askedRetryAfterMs(error) ?? 0) / 1000;
  return Math.min(MAX_BACKOFF_SECONDS, Math.max(1, jittered, Math.ceil(asked)));
}

/** Decides what a failed attempt means. Unknown errors (not docrelay's) are taken as retryable. */
export function decideRetry(facts: FailureFacts): RetryDecision {
  const { error } = facts;
  const reason = describeFailure(error);
  const retryable = isRetryable(error) || !(error instanceof DocrelayError);
  // Failures so far: the receive count, or the job's attempts when they are more (a requeued message starts
  // its count over), so the backoff keeps growing through a long outage instead of starting again.
  const failures = Math.max(facts.receiveCount, facts.attempts);
  const delaySeconds = (): number => backoffSeconds(error, failures, facts.retryBaseSeconds, facts.random);
  const outage = retryable && isServiceOutage(error);
  const askedMs = askedRetryAfterMs(error);
  if (askedMs !== undefined && facts.canRequeue) {
    // The service said when to come back: a new message delayed until then carries the job, so the wait is
    // neither cut short nor counted as a failed receive (the queue's receive count starts over).
    const asked = Math.min(MAX_BACKOFF_SECONDS, Math.max(1, Math.ceil(askedMs / 1000)));
    if (facts.nowMs - facts.receivedAtMs < facts.outageBudgetMs)
      return { kind: 'requeue', delaySeconds: asked, reason };
  }
  if (
    outage &&
    facts.receiveCount >= facts.maxReceiveCount &&
    facts.canRequeue &&
    facts.nowMs - facts.receivedAtMs < facts.outageBudgetMs
  ) {
    return { kind: 'requeue', delaySeconds: delaySeconds(), reason };
  }
  if (retryable && facts.receiveCount < facts.maxReceiveCount) {
    // Links that kept being refused: the attempt already asked again at once, so the wait is a short pause,
    // not a backoff that grows with the job's attempts and would leave the job for minutes.
    const wait =
      error instanceof LinksExpiringError
        ? Math.min(delaySeconds(), LINKS_EXPIRING_MAX_DELAY_SECONDS)
        : delaySeconds();
    return { kind: 'retry', delaySeconds: wait, reason, outage };
  }
  if (!retryable) return { kind: 'fail', error: reason };
  return {
    kind: 'fail',
    error: {
      code: 'RETRIES_EXHAUSTED',
      message: `gave up after ${failures} attempts: ${reason.message}`,
    },
    lastError: reason,
  };
}

/** Downloads of a file retried within one attempt, at most, before the failure goes to the job's backoff. */
export const MAX_COPY_RETRIES_PER_ATTEMPT = 2;
/** The pause before the first retried download in an attempt; it doubles with each further failure. */
export const COPY_RETRY_BASE_MS = 250;
/** A wait may take a quarter of a link's remaining life at most; the rest is for the download. */
const LINK_WAIT_SHARE = 4;

/** What to do after a copy from a link failed, within the attempt. */
export type CopyRetryDecision =
  | { readonly kind: 'redownload'; readonly pauseMs: number }
  | { readonly kind: 'settle' };

/**
 * Decides what a failed copy means within an attempt: download again after a doubling pause, or at once when
 * the link should not outlive the pause (only a refusal makes a new document). A Retry-After, an error that
 * is not retryable or too many failures settle it through the job's retry decision (`decideRetry`).
 */
export function decideCopyRetry(facts: {
  readonly error: unknown;
  /** Copy failures so far in this attempt, this one included. */
  readonly failures: number;
  /** How long the job's links are expected to live still, in ms. */
  readonly linkRemainingMs: number;
}): CopyRetryDecision {
  const { error } = facts;
  const retryable = isRetryable(error) || !(error instanceof DocrelayError);
  if (!retryable || backsOff(error)) return { kind: 'settle' };
  if (facts.failures > MAX_COPY_RETRIES_PER_ATTEMPT) return { kind: 'settle' };
  const pauseMs = COPY_RETRY_BASE_MS * 2 ** Math.max(0, facts.failures - 1);
  return { kind: 'redownload', pauseMs: pauseMs * LINK_WAIT_SHARE <= facts.linkRemainingMs ? pauseMs : 0 };
}

/**
 * The delay before the next attempt of a job with live links: the backoff, shortened so the attempt starts
 * well before they expire and copies. When not even a second fits, or the service asked to back off, the
 * backoff stands.
 */
export function fitDelayToLinks(delaySeconds: number, error: unknown, linkRemainingMs: number): number {
  if (backsOff(error)) return delaySeconds;
  if (delaySeconds * 1000 * LINK_WAIT_SHARE <= linkRemainingMs) return delaySeconds;
  const fitted = Math.floor(linkRemainingMs / LINK_WAIT_SHARE / 1000);
  return fitted >= 1 ? fitted : delaySeconds;
}
