/**
 * The base of every docrelay error: a stable `code` a caller can branch on, whether trying again may help,
 * and the original error as `cause`. Messages never carry secrets (API keys, webhook secrets, tokens).
 */
export class DocrelayError extends Error {
  /** Stable, machine-readable code, e.g. `DOCGEN_RATE_LIMITED`. */
  readonly code: string;
  /** True when the same operation may succeed if tried again later. */
  readonly retryable: boolean;

  constructor(code: string, message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

/** True for any docrelay error that says trying again may help. */
export const isRetryable = (error: unknown): boolean => error instanceof DocrelayError && error.retryable;
