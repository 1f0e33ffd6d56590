/**
 * Errors the emulator answers with. The interface page does not show the error body, so the emulator uses
 * one plausible shape everywhere: `{ "error": { "code": "<Code>", "message": "<text>" } }`.
 */

/** An HTTP error the emulator answers with: status, a stable code, a message and optional headers. */
export class EmulatorHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'EmulatorHttpError';
  }
}

/** The error body the emulator sends: its chosen shape, since the real one is not shown. */
export interface EmulatorErrorBody {
  error: { code: string; message: string };
}

const codes: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  408: 'RequestTimeout',
  409: 'Conflict',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  429: 'TooManyRequests',
  500: 'InternalServerError',
  502: 'BadGateway',
  503: 'ServiceUnavailable',
  504: 'GatewayTimeout',
};

const messages: Record<number, string> = {
  429: 'Too many requests',
  500: 'Internal server error',
  502: 'Bad gateway',
  503: 'Service unavailable',
  504: 'Gateway timeout',
};

/** The stable error code of an HTTP status (`HttpError<status>` for statuses without a name). */
export const codeOfStatus = (status: number): string => codes[status] ?? `HttpError${status}`;

/** An injected failure with `status`: a generic message, and `Retry-After` on 429 and 503. */
export function injectedError(status: number, retryAfterSeconds: number): EmulatorHttpError {
  const headers: Record<string, string> =
    status === 429 || status === 503
      ? { 'retry-after': String(Math.max(0, Math.round(retryAfterSeconds))) }
      : {};
  return new EmulatorHttpError(status, codeOfStatus(status), messages[status] ?? `HTTP ${status}`, headers);
}

/** 405 naming the methods the path allows. */
export const methodNotAllowed = (allowed: string): EmulatorHttpError =>
  new EmulatorHttpError(405, 'MethodNotAllowed', `Use ${allowed} on this path`, { allow: allowed });
