/**
 * The base of every docrelay error: a stable `code` a caller can branch on, whether trying again may help,
 * and the original error as `cause`. Messages never carry secrets (API keys, webhook secrets, tokens).
 */
export class DocrelayError extends Error {
  /**
   * The class's name, written out in every subclass: Lambda bundles are minified without keeping names (see
   * lib/docrelay-function.ts), so `new.target.name` would read `t` there. test/unit/commons/errors.test.ts
   * checks every error class in functions/ declares its own.
   */
  override name = 'DocrelayError';
  /** Stable, machine-readable code, e.g. `DOCGEN_RATE_LIMITED`. */
  readonly code: string;
  /** True when the same operation may succeed if tried again later. */
  readonly retryable: boolean;

  constructor(code: string, message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? false;
  }
}

/** True for any docrelay error that says trying again may help. */
export const isRetryable = (error: unknown): boolean => error instanceof DocrelayError && error.retryable;
