/**
 * The core's errors: why a delivery is refused, why a job's attempt stopped, and the state machine's own.
 * None knows HTTP (functions/http/problem.ts maps them in one place); messages never hold a secret.
 */
import { DocrelayError } from '../commons/errors';

/** Why a delivery is refused before anything is recorded (the sender's fault; retrying the same fails). */
export type RefusalReason =
  | 'unknown-integration'
  | 'payload-too-large'
  | 'unsupported-media-type'
  | 'malformed-body'
  | 'unprocessable-payload';

/** A delivery refused; `message` is safe to show the sender. Nothing was recorded or queued. */
export class DeliveryRefusedError extends DocrelayError {
  override name = 'DeliveryRefusedError';
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(`DELIVERY_${reason.toUpperCase().replace(/-/g, '_')}`, message);
  }
}

/** A write lost a race with another writer of the same job (its version moved on). */
export class JobConflictError extends DocrelayError {
  override name = 'JobConflictError';
  constructor(jobId: string, cause?: unknown) {
    super('JOB_CONFLICT', `job ${jobId} was changed by another worker`, { retryable: true, cause });
  }
}

/** A transition the job's state does not allow (a stale message or a bug): never retried. */
export class InvalidTransitionError extends DocrelayError {
  override name = 'InvalidTransitionError';
  constructor(jobId: string, status: string, transition: string) {
    super('INVALID_TRANSITION', `job ${jobId} cannot go through "${transition}" while ${status}`);
  }
}

/** The job's rule is gone from the configuration (it changed under the job). Not retryable. */
export class RuleRemovedError extends DocrelayError {
  override name = 'RuleRemovedError';
  constructor(integration: string, rule: string) {
    super('RULE_REMOVED', `integration "${integration}" has no rule "${rule}" any more`);
  }
}

/** The job's delivery record expired or was deleted, so its payload is gone. Not retryable. */
export class DeliveryMissingError extends DocrelayError {
  override name = 'DeliveryMissingError';
  constructor(deliveryId: string) {
    super('DELIVERY_MISSING', `the delivery ${deliveryId} of this job is no longer recorded`);
  }
}

/** The download links expired again and again within one attempt. Retryable (a later attempt starts anew). */
export class LinksExpiringError extends DocrelayError {
  override name = 'LinksExpiringError';
  constructor() {
    super('LINKS_EXPIRING', 'download links kept expiring before the copy finished', { retryable: true });
  }
}

/** The job started as many attempts as `jobs.maxAttempts` allows (its worker may die on it every time). */
export class AttemptsExhaustedError extends DocrelayError {
  override name = 'AttemptsExhaustedError';
  constructor(attempts: number) {
    super(
      'ATTEMPTS_EXHAUSTED',
      `attempts-exhausted: ${attempts} attempts started and none finished the job (the limit is jobs.maxAttempts)`,
    );
  }
}
