/**
 * `docrelay send <integrationId> --payload <file> [--url <base>] [--content-type <type>] [--header name:value]...
 * [--delivery-id <id>] [--wait]`: signs the payload's bytes with the integration's secret, as its sender would
 * (the URL too for senders that sign it; inside the body for senders that sign there), and posts them to the
 * webhook URL (the local stack's unless --url). The content type follows the file's extension (.json, .xml,
 * .txt, .form, .urlencoded) unless --content-type says otherwise. Prints the status line (`202 Accepted`) on stderr and the
 * answer's JSON on stdout; exit 0 for 2xx, 1 with the problem on one line. With --wait it then follows the jobs to stored (exit 0) or failed (exit 1).
 */

import { STATUS_CODES } from 'node:http';
import { FileSecretSource } from '../../functions/adapters/local/file-secret-source';
import { readLocalSettings } from '../../functions/commons/env';
import { senderScheme, signDelivery, signedBody } from '../../functions/senders';
import { waitForJobs } from './follow';
import {
  contentTypeOf,
  findIntegration,
  firstLine,
  loadConfigOrExplain,
  parseHeaderOptions,
  readInputFile,
} from './ops-args';
import { localApiUrl } from './stack-target';
import { CliError, type CommandContext } from './types';

const USAGE =
  'usage: docrelay send <integrationId> --payload <file> [--url <base>] [--content-type <type>] [--header name:value]... [--delivery-id <id>] [--wait]';

/** How long to wait for the webhook's answer (the ingest answers before any generation). */
const REQUEST_TIMEOUT_MS = 30_000;
/** How often `--wait` looks at the jobs. */
const WAIT_POLL_MS = 500;

/** What `docrelay send` takes besides the integration. */
export interface SendOptions {
  readonly payload: string;
  readonly url?: string;
  readonly header?: string[];
  readonly deliveryId?: string;
  /** Overrides the content type the file's extension implies. */
  readonly contentType?: string;
  readonly wait?: boolean;
  /** Seconds `--wait` follows the jobs. */
  readonly timeout: number;
}

/** Signs and posts the payload file (then, with --wait, follows its jobs); resolves to the exit code. */
export async function send(ctx: CommandContext, integrationId: string, values: SendOptions): Promise<number> {
  const extraHeaders = parseHeaderOptions(values.header ?? [], USAGE);

  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const loaded = await loadConfigOrExplain(settings.configPath);
  const integration = findIntegration(loaded, integrationId);
  const verify = integration.config.verify;
  if (verify === undefined) {
    throw new CliError(
      `integration "${integrationId}" takes EventBridge events, not webhooks: use docrelay put-event ${integrationId} --event <file>`,
    );
  }
  const deliveryId = values.deliveryId;
  const idSource = senderScheme(verify.scheme)?.deliveryId;
  if (deliveryId !== undefined && (idSource === undefined || !('header' in idSource))) {
    throw new CliError(
      `--delivery-id: scheme ${verify.scheme} carries no delivery id header (the id comes from the body or the configured deliveryId); use --header (${USAGE})`,
      2,
    );
  }

  const base = values.url ?? (await localApiUrl(ctx));
  if (base === undefined) {
    throw new CliError(
      `no local stack is running for ${settings.dataDir}: start it with npm start, or give --url <base>`,
    );
  }
  let url: URL;
  try {
    url = new URL(`${base.replace(/\/+$/, '')}/v1/hooks/${encodeURIComponent(integrationId)}`);
  } catch {
    throw new CliError(`--url must be an absolute URL, got "${base}" (${USAGE})`, 2);
  }

  const payload = await readInputFile(ctx.cwd, values.payload, 'payload');
  const names =
    verify.secret === undefined ? [] : Array.isArray(verify.secret) ? verify.secret : [verify.secret];
  const source = new FileSecretSource(settings.secretsFile);
  // Only the first secret signs; reading it names the secret in any error, never its value.
  const secrets = names.length === 0 ? [] : [await source.get(names[0] as string)];
  const signing = {
    config: verify,
    secrets,
    rawBody: payload,
    now: new Date(),
    url: url.toString(),
    method: 'POST',
    ...(deliveryId === undefined ? {} : { deliveryId }),
  };
  // Senders that sign inside the body (or stamp a signed time in it) post other bytes than the file's.
  const rawBody = signedBody(signing);
  const signed = signDelivery({ ...signing, rawBody });
  const headers: Record<string, string> = {
    'content-type': contentTypeOf(values.payload),
    'user-agent': 'docrelay-send',
    ...signed,
    ...(values.contentType === undefined ? {} : { 'content-type': values.contentType }),
    ...extraHeaders,
  };

  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers,
      body: rawBody,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    throw new CliError(`cannot reach ${url.origin}: ${firstLine(cause ?? error)}`);
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok) throw new CliError(`${response.status} ${describeProblem(body, response.statusText)}`);
  // The status on stderr, so that stdout stays the answer's JSON for scripts.
  const reason = response.statusText || STATUS_CODES[response.status] || '';
  ctx.stderr.write(`${`${response.status} ${reason}`.trimEnd()}\n`);
  ctx.stdout.write(`${body === undefined ? text : JSON.stringify(body, null, 2)}\n`);
  if (values.wait !== true) return 0;
  const jobIds = jobIdsOf(body);
  if (jobIds.length === 0) {
    ctx.stderr.write('no job to wait for\n');
    return 0;
  }
  return await waitForJobs(ctx, jobIds, { timeoutMs: values.timeout * 1000, pollMs: WAIT_POLL_MS });
}

function jobIdsOf(body: unknown): string[] {
  const jobs = (body as { jobs?: unknown } | undefined)?.jobs;
  if (!Array.isArray(jobs)) return [];
  return jobs
    .map((job) => (job as { jobId?: unknown }).jobId)
    .filter((id): id is string => typeof id === 'string');
}

/** A problem+json answer as `title: detail`, on one line. */
function describeProblem(body: unknown, fallback: string): string {
  if (body === null || typeof body !== 'object') return fallback;
  const { title, detail } = body as { title?: unknown; detail?: unknown };
  const parts = [title, detail].filter((part): part is string => typeof part === 'string' && part !== '');
  return (parts.length > 0 ? parts.join(': ') : fallback).replace(/\s+/g, ' ');
}
