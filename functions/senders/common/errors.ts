import { DocrelayError } from '../../commons/errors';

/** Why a delivery was refused; all of them map to HTTP 401. */
export type SignatureErrorCode =
  | 'SIGNATURE_MISSING'
  | 'SIGNATURE_INVALID'
  | 'SIGNATURE_MALFORMED'
  | 'TIMESTAMP_STALE';

/**
 * A delivery failed verification. `detail` is short and safe for a problem+json body: it names headers and
 * limits, never a signature, an expected value, a secret or the body.
 */
export class SignatureError extends DocrelayError {
  override name = 'SignatureError';
  declare readonly code: SignatureErrorCode;
  /** Short, client-safe explanation for the problem+json `detail` field. */
  readonly detail: string;

  constructor(code: SignatureErrorCode, detail: string) {
    // Never retryable: the same bytes with the same headers will fail the same way.
    super(code, detail, { retryable: false });
    this.detail = detail;
  }
}

/** The integration's verify block cannot work (missing secret, unknown scheme, `none` without opt-in). */
export class VerifyConfigError extends DocrelayError {
  override name = 'VerifyConfigError';
  declare readonly code: 'VERIFY_CONFIG_INVALID';

  constructor(message: string) {
    super('VERIFY_CONFIG_INVALID', message, { retryable: false });
  }
}

/** A delivery cannot be signed (`docrelay send`); the message says why, never with a secret value. */
export class SigningError extends DocrelayError {
  override name = 'SigningError';
  declare readonly code: 'SIGNING_IMPOSSIBLE';

  constructor(message: string) {
    super('SIGNING_IMPOSSIBLE', message, { retryable: false });
  }
}
