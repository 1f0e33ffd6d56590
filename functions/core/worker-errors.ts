/** Why a job's attempt stopped, as the worker records it (codes are stable; messages never hold a secret). */
import { DocrelayError } from '../commons/errors';

/** The job's rule is gone from the configuration (it changed under the job). Not retryable. */
export class RuleRemovedError extends DocrelayError {
  constructor(integration: string, rule: string) {
    super('RULE_REMOVED', `integration "${integration}" has no rule "${rule}" any more`);
  }
}

/** The job's delivery record expired or was deleted, so its payload is gone. Not retryable. */
export class DeliveryMissingError extends DocrelayError {
  constructor(deliveryId: string) {
    super('DELIVERY_MISSING', `the delivery ${deliveryId} of this job is no longer recorded`);
  }
}

/** The download links expired again and again within one attempt. Retryable (a later attempt starts anew). */
export class LinksExpiringError extends DocrelayError {
  constructor() {
    super('LINKS_EXPIRING', 'download links kept expiring before the copy finished', { retryable: true });
  }
}

/** A message to try again later: reported to SQS as a batch item failure. */
export class RetryLaterError extends DocrelayError {
  constructor(jobId: string, code: string) {
    super('RETRY_LATER', `job ${jobId} will be retried (${code})`, { retryable: true });
  }
}
