import { DocrelayError } from '../../commons/errors';

/** The bytes received do not match what the service announced (a truncated or overlong download). */
export class CopySizeMismatchError extends DocrelayError {
  constructor(received: number, expected: number, what: string) {
    super('COPY_SIZE_MISMATCH', `received ${received} bytes but ${what} announced ${expected}`, {
      retryable: true,
    });
  }
}

/** Writing to S3 failed. */
export class StorageWriteError extends DocrelayError {
  constructor(key: string, cause: unknown) {
    super('STORAGE_WRITE_FAILED', `could not write s3 object ${key}`, { retryable: true, cause });
  }
}
