/**
 * The one place where an answer's status or a failed exchange becomes a client error, for API calls and
 * downloads alike (for a download, 401/403/404/410 mean the link expired). Messages never hold a secret.
 */
import {
  DocgenAbortedError,
  DocgenAuthError,
  DocgenBadRequestError,
  DocgenBadResponseError,
  type DocgenError,
  type DocgenErrorDetails,
  DocgenLinkExpiredError,
  DocgenNetworkError,
  DocgenNotFoundError,
  DocgenPayloadTooLargeError,
  DocgenRateLimitedError,
  DocgenTimeoutError,
  DocgenUnavailableError,
} from './errors';
import { isErrorLike, redactUrl, sanitizeCause, scrubText } from './redact';
import { parseRetryAfter } from './retry';

const SERVICE_MESSAGE_MAX = 300;

/** An answer that was not the expected one. */
export interface FailedAnswer {
  readonly status: number;
  /** Reads one response header (lower-case name). */
  readonly header: (name: string) => string | null | undefined;
  /** The body's text (possibly cut short). */
  readonly text: string;
}

/** What the mapping needs to know about the request. */
export interface StatusContext {
  /** The client operation, e.g. `createDocument` or `download`. */
  readonly operation: string;
  /** What was asked for, for messages: `template 9001`, or a download's redacted link. */
  readonly what: string;
  /** The answer came from a download link: 401, 403, 404 and 410 say the link has expired. */
  readonly download?: boolean;
  /** Size of the request body, for a 413. */
  readonly requestBytes?: number;
  /** The key was read again after a first 401/403. */
  readonly keyRefreshed?: boolean;
  /** Values never to print. */
  readonly secrets: readonly string[];
  /** The clock, for a `Retry-After` given as a date. */
  readonly now: number;
}

/** The client error for an unexpected answer. */
export function statusError(context: StatusContext, answer: FailedAnswer): DocgenError {
  const { operation, what } = context;
  const { status } = answer;
  const serviceMessage = extractServiceMessage(answer.text, context.secrets);
  const said = serviceMessage === undefined ? '' : `: ${serviceMessage}`;
  const details: DocgenErrorDetails = {
    operation,
    status,
    serviceMessage,
    retryAfterMs: parseRetryAfter(answer.header('retry-after'), context.now),
  };
  if (context.download === true && (status === 401 || status === 403 || status === 404 || status === 410)) {
    return new DocgenLinkExpiredError(
      `${operation}: the link ${what} has expired or its file was removed (HTTP ${status}); generate the document again${said}`,
      details,
    );
  }
  if (status === 401 || status === 403) {
    return new DocgenAuthError(
      `${operation}: the service refused the API key (HTTP ${status})${context.keyRefreshed ? ', also after reading the key again' : ''}${said}`,
      details,
    );
  }
  if (status === 404)
    return new DocgenNotFoundError(`${operation}: ${what} not found (HTTP 404)${said}`, details);
  if (status === 413) {
    const bytes = context.requestBytes ?? 0;
    return new DocgenPayloadTooLargeError(
      `${operation}: the service refused a request body of ${bytes} bytes as too large (HTTP 413)${said}`,
      bytes,
      details,
    );
  }
  if (status === 429)
    return new DocgenRateLimitedError(`${operation}: ${what} rate limited (HTTP 429)${said}`, details);
  if (status >= 500) {
    return new DocgenUnavailableError(
      `${operation}: the service failed for ${what} (HTTP ${status})${said}`,
      details,
    );
  }
  if (status >= 300 && status < 400) {
    const location = answer.header('location');
    return new DocgenBadResponseError(
      `${operation}: unexpected redirect (HTTP ${status})${location ? ` to ${redactUrl(location)}` : ''}; not followed`,
      details,
    );
  }
  if (status >= 200 && status < 300) {
    return new DocgenBadResponseError(`${operation}: unexpected HTTP ${status}${said}`, details);
  }
  return new DocgenBadRequestError(
    `${operation}: the service refused the request for ${what} (HTTP ${status})${said}`,
    details,
  );
}

/** Why an exchange got no answer: the caller aborted, the timeout passed, or the network failed. */
export type TransportFailure = 'abort' | 'timeout' | 'network';

/** The client error for an exchange that failed before or while its answer arrived. */
export function transportError(
  operation: string,
  url: URL,
  error: unknown,
  failure: TransportFailure,
  timeoutMs: number,
  secrets: readonly string[],
): DocgenError {
  const details: DocgenErrorDetails = { operation, cause: sanitizeCause(error, secrets) };
  if (failure === 'abort') return new DocgenAbortedError(`${operation}: aborted by the caller`, details);
  if (failure === 'timeout') {
    return new DocgenTimeoutError(
      `${operation}: no complete answer from ${redactUrl(url)} within ${timeoutMs} ms`,
      details,
    );
  }
  return new DocgenNetworkError(
    `${operation}: cannot reach ${redactUrl(url)}: ${scrubText(describeTransportError(error), secrets)}`,
    details,
  );
}

/** The service's message from an error body (shape not documented): JSON fields first, else the text. */
export function extractServiceMessage(text: string, secrets: readonly string[] = []): string | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  let message: string | undefined;
  try {
    message = pickMessage(JSON.parse(trimmed));
  } catch {
    message = undefined;
  }
  const chosen = (message ?? trimmed).replace(/\s+/g, ' ').trim();
  const scrubbed = scrubText(chosen, secrets);
  return scrubbed.length > SERVICE_MESSAGE_MAX ? `${scrubbed.slice(0, SERVICE_MESSAGE_MAX - 1)}…` : scrubbed;
}

function pickMessage(json: unknown): string | undefined {
  if (typeof json === 'string') return json;
  if (json === null || typeof json !== 'object') return undefined;
  const record = json as Record<string, unknown>;
  const nested = record.error;
  if (typeof record.message === 'string') return record.message;
  if (nested !== null && typeof nested === 'object') {
    const inner = (nested as Record<string, unknown>).message;
    if (typeof inner === 'string') return inner;
  }
  if (typeof nested === 'string') return nested;
  for (const key of ['title', 'detail', 'error_description']) {
    if (typeof record[key] === 'string') return record[key] as string;
  }
  return undefined;
}

function describeTransportError(error: unknown): string {
  if (!isErrorLike(error)) return String(error);
  const own = (error as { code?: unknown }).code;
  const cause = error.cause;
  const code =
    typeof own === 'string'
      ? own
      : cause !== null && typeof cause === 'object' && typeof (cause as { code?: unknown }).code === 'string'
        ? (cause as { code: string }).code
        : undefined;
  return code === undefined ? error.message : `${error.message} (${code})`;
}
