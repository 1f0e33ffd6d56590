import { DocrelayError } from '../commons/errors';

/** A write lost a race with another writer of the same job (its version moved on). */
export class JobConflictError extends DocrelayError {
  constructor(jobId: string, cause?: unknown) {
    super('JOB_CONFLICT', `job ${jobId} was changed by another worker`, { retryable: true, cause });
  }
}

/** No job with that id. */
export class JobNotFoundError extends DocrelayError {
  constructor(jobId: string) {
    super('JOB_NOT_FOUND', `no job ${jobId}`);
  }
}

/** The job table could not be read or written. */
export class JobStoreError extends DocrelayError {
  constructor(operation: string, cause: unknown) {
    super('JOB_STORE_UNAVAILABLE', `the job table could not ${operation}`, { retryable: true, cause });
  }
}
