import { DocrelayError } from '../../commons/errors';

/** The bytes received do not match what the service announced (a truncated or overlong download). */
export class CopySizeMismatchError extends DocrelayError {
  override name = 'CopySizeMismatchError';
  constructor(received: number, expected: number, what: string) {
    super('COPY_SIZE_MISMATCH', `received ${received} bytes but ${what} announced ${expected}`, {
      retryable: true,
    });
  }
}

/** Writing to S3 failed. */
export class StorageWriteError extends DocrelayError {
  override name = 'StorageWriteError';
  constructor(key: string, cause: unknown) {
    super('STORAGE_WRITE_FAILED', `could not write s3 object ${key}`, { retryable: true, cause });
  }
}

/** The object S3 holds after the upload is not what was streamed (its SHA-256 or its size differs). */
export class StoredObjectMismatchError extends DocrelayError {
  override name = 'StoredObjectMismatchError';
  constructor(key: string, what: string) {
    super('STORED_OBJECT_MISMATCH', `s3 object ${key} differs from the bytes sent: ${what}`, {
      retryable: true,
    });
  }
}
