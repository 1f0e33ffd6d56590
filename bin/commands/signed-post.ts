/**
 * Signing a payload as an integration's sender would and posting it to its webhook URL: what `send` and
 * `smoke` share. Senders that sign inside the body (or stamp a signed time in it) post other bytes than the
 * file's; the headers added after signing are not covered by the signature.
 */
import { STATUS_CODES } from 'node:http';
import { signDelivery, signedBody, type VerifyConfig } from '../../functions/senders';
import { firstLine } from './ops-args';
import { CliError } from './types';

/** How long to wait for the webhook's answer (the ingest answers before any generation). */
const REQUEST_TIMEOUT_MS = 30_000;

/** What to post, and with which secret values (the first one signs). */
export interface SignedPostRequest {
  readonly url: URL;
  readonly verify: VerifyConfig;
  readonly secrets: readonly string[];
  readonly payload: Buffer;
  readonly contentType: string;
  readonly userAgent: string;
  readonly deliveryId?: string;
  /** Headers set after signing (they win over the signed ones). */
  readonly extraHeaders?: Readonly<Record<string, string>>;
}

/** The webhook's answer: status, reason, text and the JSON it parses to (undefined when it is not JSON). */
export interface SignedPostAnswer {
  readonly status: number;
  readonly reason: string;
  readonly text: string;
  readonly body: unknown;
}

/** Signs and posts; an unreachable URL is a one-line CliError, any HTTP answer is returned. */
export async function postSigned(request: SignedPostRequest): Promise<SignedPostAnswer> {
  const signing = {
    config: request.verify,
    secrets: request.secrets,
    rawBody: request.payload,
    now: new Date(),
    url: request.url.toString(),
    method: 'POST',
    ...(request.deliveryId === undefined ? {} : { deliveryId: request.deliveryId }),
  };
  const rawBody = signedBody(signing);
  const headers: Record<string, string> = {
    'content-type': request.contentType,
    'user-agent': request.userAgent,
    ...signDelivery({ ...signing, rawBody }),
    ...request.extraHeaders,
  };
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: 'POST',
      headers,
      body: rawBody,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    throw new CliError(`cannot reach ${request.url.origin}: ${firstLine(cause ?? error)}`);
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const reason = response.statusText || STATUS_CODES[response.status] || '';
  return { status: response.status, reason, text, body };
}

/** A problem+json answer as `title: detail`, on one line. */
export function describeProblem(body: unknown, fallback: string): string {
  if (body === null || typeof body !== 'object') return fallback;
  const { title, detail } = body as { title?: unknown; detail?: unknown };
  const parts = [title, detail].filter((part): part is string => typeof part === 'string' && part !== '');
  return (parts.length > 0 ? parts.join(': ') : fallback).replace(/\s+/g, ' ');
}

/** The job ids of an ingest's 202 answer. */
export function jobIdsOf(body: unknown): string[] {
  const jobs = (body as { jobs?: unknown } | undefined)?.jobs;
  if (!Array.isArray(jobs)) return [];
  return jobs
    .map((job) => (job as { jobId?: unknown }).jobId)
    .filter((id): id is string => typeof id === 'string');
}
