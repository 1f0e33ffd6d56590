/** Errors of the DynamoDB adapter. */
import { DocrelayError } from '../../commons/errors';

/** The job table could not be read or written (retryable: the table or the network may be back soon). */
export class JobStoreError extends DocrelayError {
  override name = 'JobStoreError';
  constructor(operation: string, cause: unknown) {
    super('JOB_STORE_UNAVAILABLE', `the job table could not ${operation}`, { retryable: true, cause });
  }
}
