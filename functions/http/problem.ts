/**
 * Errors to HTTP in one place, for every Lambda entry point and the local API server, as problem+json
 * (RFC 9457). A refusal says what is wrong with the request; anything unexpected is a generic 5xx without
 * internals, and a retryable failure a 503 with Retry-After so the sender tries again later.
 */
import { DocrelayError } from '../commons/errors';
import { DeliveryRefusedError, type RefusalReason } from '../core/errors';
import { SignatureError } from '../senders';

/** An HTTP answer of the API (the shape API Gateway's HTTP API takes from a Lambda). */
export interface HttpResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** A problem an entry point answers itself (a wrong method, an unknown job): its HTTP fields are its own. */
export class ProblemError extends DocrelayError {
  override name = 'ProblemError';
  constructor(
    readonly status: number,
    readonly slug: string,
    readonly title: string,
    readonly detail: string,
    readonly extraHeaders: Record<string, string> = {},
    /** Members beside the four fixed ones (RFC 9457 extensions), e.g. the choices of an ambiguous request. */
    readonly extensions: Readonly<Record<string, unknown>> = {},
  ) {
    super(`PROBLEM_${slug.toUpperCase().replace(/-/g, '_')}`, detail);
  }
}

/** The `type` URI of a problem. */
export const problemType = (slug: string): string => `urn:docrelay:problem:${slug}`;

/** A problem+json response. */
export function problemResponse(
  status: number,
  slug: string,
  title: string,
  detail: string,
  headers: Record<string, string> = {},
  extensions: Readonly<Record<string, unknown>> = {},
): HttpResponse {
  const body: Record<string, unknown> = { type: problemType(slug), title, status, detail };
  // An extension never replaces a fixed member.
  for (const [name, value] of Object.entries(extensions)) if (!Object.hasOwn(body, name)) body[name] = value;
  return {
    statusCode: status,
    headers: { 'content-type': 'application/problem+json', ...headers },
    body: JSON.stringify(body),
  };
}

/** A JSON response. */
export function jsonResponse(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): HttpResponse {
  return {
    statusCode: status,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  };
}

/** Each refusal's status and title; the slug is the reason itself. */
const REFUSALS: Readonly<Record<RefusalReason, { status: number; title: string }>> = {
  'unknown-integration': { status: 404, title: 'Unknown integration' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'malformed-body': { status: 400, title: 'Malformed body' },
  'unprocessable-payload': { status: 400, title: 'Payload cannot be processed' },
};

/** True when the error is the caller's (a 4xx answer): refused, not failed. */
export const isClientError = (error: unknown): boolean =>
  error instanceof ProblemError || error instanceof DeliveryRefusedError || error instanceof SignatureError;

/** Maps any error to its HTTP answer. */
export function errorResponse(error: unknown): HttpResponse {
  if (error instanceof ProblemError) {
    return problemResponse(
      error.status,
      error.slug,
      error.title,
      error.detail,
      error.extraHeaders,
      error.extensions,
    );
  }
  if (error instanceof DeliveryRefusedError) {
    const { status, title } = REFUSALS[error.reason];
    return problemResponse(status, error.reason, title, error.message);
  }
  if (error instanceof SignatureError) {
    const slug = error.code === 'TIMESTAMP_STALE' ? 'stale-timestamp' : 'invalid-signature';
    const title =
      error.code === 'TIMESTAMP_STALE' ? 'Stale or future timestamp' : 'Missing or invalid signature';
    return problemResponse(401, slug, title, error.detail);
  }
  if (error instanceof DocrelayError && error.retryable) {
    return problemResponse(
      503,
      'temporarily-unavailable',
      'Temporarily unavailable',
      'docrelay could not accept the request right now; nothing was queued. Try again.',
      { 'retry-after': '5' },
    );
  }
  return problemResponse(500, 'internal-error', 'Internal error', 'docrelay failed to handle the request.');
}
