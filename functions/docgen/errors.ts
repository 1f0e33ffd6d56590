/**
 * Errors of the Document Generation Service client. Each has a stable `code`; `retryable` says whether the
 * same call may succeed later (the client has already retried those within its own budget). Messages
 * never hold the API key or a download token: URLs are written through `redactUrl`, causes are scrubbed.
 */
import { DocrelayError } from '../commons/errors';

/** What every client error may say beyond its message. */
export interface DocgenErrorDetails {
  /** The client operation, e.g. `createDocument`. */
  readonly operation?: string;
  /** HTTP status of the last response, when there was one. */
  readonly status?: number;
  /** Requests made before giving up. @default 1 */
  readonly attempts?: number;
  /** The service's own message from its error body, truncated. */
  readonly serviceMessage?: string;
  /** How long the service asked to wait (`Retry-After`), in milliseconds. */
  readonly retryAfterMs?: number;
  /** The underlying error, already scrubbed of secrets. */
  readonly cause?: unknown;
}

/** The base of the client's errors. */
export class DocgenError extends DocrelayError {
  override name = 'DocgenError';
  /** The client operation that failed. */
  readonly operation?: string;
  /** HTTP status of the last response, when there was one. */
  readonly status?: number;
  /** Requests made before giving up (set by the retry loop). */
  attempts: number;
  /** The service's own message, truncated. */
  readonly serviceMessage?: string;
  /** How long the service asked to wait, in milliseconds. */
  readonly retryAfterMs?: number;

  constructor(code: string, message: string, retryable: boolean, details: DocgenErrorDetails = {}) {
    super(code, message, { retryable, cause: details.cause });
    this.operation = details.operation;
    this.status = details.status;
    this.attempts = details.attempts ?? 1;
    this.serviceMessage = details.serviceMessage;
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** The service answered 429: too many requests. */
export class DocgenRateLimitedError extends DocgenError {
  override name = 'DocgenRateLimitedError';
  constructor(message: string, details?: DocgenErrorDetails) {
    super('DOCGEN_RATE_LIMITED', message, true, details);
  }
}

/** The service answered with a 5xx status. */
export class DocgenUnavailableError extends DocgenError {
  override name = 'DocgenUnavailableError';
  constructor(message: string, details?: DocgenErrorDetails) {
    super('DOCGEN_UNAVAILABLE', message, true, details);
  }
}

/** A request got no (complete) answer within the client's timeout. */
export class DocgenTimeoutError extends DocgenError {
  override name = 'DocgenTimeoutError';
  constructor(message: string, details?: DocgenErrorDetails) {
    super('DOCGEN_TIMEOUT', message, true, details);
  }
}

/** The connection failed (refused, reset, DNS). */
export class DocgenNetworkError extends DocgenError {
  override name = 'DocgenNetworkError';
  constructor(message: string, details?: DocgenErrorDetails) {
    super('DOCGEN_NETWORK', message, true, details);
  }
}

/**
 * A download the service answered and began sending, then its connection broke off (a truncated download).
 * Retried, but as a failure of the job's copy, not as an outage of the service: a link that keeps breaking off
 * uses up the job's receives (RETRIES_EXHAUSTED) instead of regenerating its document for the outage budget.
 */
export class DocgenDownloadCutError extends DocgenError {
  override name = 'DocgenDownloadCutError';
  constructor(message: string, details?: DocgenErrorDetails) {
    super('DOCGEN_DOWNLOAD_CUT', message, true, details);
  }
}

/** The API key was refused (401/403), even after reading it again. */
export class DocgenAuthError extends DocgenError {
  override name = 'DocgenAuthError';
  constructor(message: string, details?: DocgenErrorDetails) {
    super('DOCGEN_AUTH', message, false, details);
  }
}

/** The template or workspace does not exist (404). */
export class DocgenNotFoundError extends DocgenError {
  override name = 'DocgenNotFoundError';
  constructor(message: string, details?: DocgenErrorDetails) {
    super('DOCGEN_NOT_FOUND', message, false, details);
  }
}

/** The service refused the request (a 4xx other than 401, 403, 404, 413, 429). */
export class DocgenBadRequestError extends DocgenError {
  override name = 'DocgenBadRequestError';
  constructor(message: string, details?: DocgenErrorDetails) {
    super('DOCGEN_BAD_REQUEST', message, false, details);
  }
}

/** The request body exceeded the service's size limit (413); the message says how many bytes were sent. */
export class DocgenPayloadTooLargeError extends DocgenError {
  override name = 'DocgenPayloadTooLargeError';
  /** Size of the body sent, in bytes. */
  readonly bodyBytes: number;

  constructor(message: string, bodyBytes: number, details?: DocgenErrorDetails) {
    super('DOCGEN_PAYLOAD_TOO_LARGE', message, false, details);
    this.bodyBytes = bodyBytes;
  }
}

/** A multi-file template needs a chosen file (`@api.templateFileId`); refused before any request. */
export class DocgenTemplateFileRequiredError extends DocgenError {
  override name = 'DocgenTemplateFileRequiredError';
  /** The template's files to choose from. */
  readonly files: ReadonlyArray<{ id: string; filename: string }>;

  constructor(message: string, files: ReadonlyArray<{ id: string; filename: string }>) {
    super('DOCGEN_TEMPLATE_FILE_REQUIRED', message, false, { operation: 'createDocument' });
    this.files = files;
  }
}

/** The service answered with a body the client cannot use (not JSON, or not the documented shape). */
export class DocgenBadResponseError extends DocgenError {
  override name = 'DocgenBadResponseError';
  constructor(message: string, details?: DocgenErrorDetails) {
    super('DOCGEN_BAD_RESPONSE', message, false, details);
  }
}

/** A download link (or a redirect) points outside the allowed origins, or is not https where required. */
export class DocgenDownloadOriginRefusedError extends DocgenError {
  override name = 'DocgenDownloadOriginRefusedError';
  constructor(message: string, details?: DocgenErrorDetails) {
    super('DOCGEN_DOWNLOAD_ORIGIN_REFUSED', message, false, details);
  }
}

/** The download link has expired or its file was removed: generate the document again. */
export class DocgenLinkExpiredError extends DocgenError {
  override name = 'DocgenLinkExpiredError';
  constructor(message: string, details?: DocgenErrorDetails) {
    super('DOCGEN_LINK_EXPIRED', message, false, details);
  }
}

/** The caller aborted the operation through its signal. */
export class DocgenAbortedError extends DocgenError {
  override name = 'DocgenAbortedError';
  constructor(message: string, details?: DocgenErrorDetails) {
    super('DOCGEN_ABORTED', message, false, details);
  }
}
