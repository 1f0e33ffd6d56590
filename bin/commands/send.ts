/**
 * `docrelay send <integrationId> --payload <file>`: signs the payload as its sender would and posts it to the
 * webhook URL (the local stack's unless --url). Prints the status on stderr and the JSON answer on stdout;
 * exit 0 for 2xx, else 1 with one line. --wait follows the jobs to stored or failed.
 */

import { FileSecretSource } from '../../functions/adapters/local/file-secret-source';
import { readLocalSettings } from '../../functions/commons/env';
import { senderScheme } from '../../functions/senders';
import { waitForJobs } from './follow';
import {
  contentTypeOf,
  findIntegration,
  loadConfigOrExplain,
  parseHeaderOptions,
  readInputFile,
} from './ops-args';
import { describeProblem, jobIdsOf, postSigned } from './signed-post';
import { localApiUrl } from './stack-target';
import { CliError, type CommandContext } from './types';

const USAGE =
  'usage: docrelay send <integrationId> --payload <file> [--url <base>] [--content-type <type>] [--header name:value]... [--delivery-id <id>] [--wait]';

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
  const answer = await postSigned({
    url,
    verify,
    secrets,
    payload,
    contentType: contentTypeOf(values.payload),
    userAgent: 'docrelay-send',
    ...(deliveryId === undefined ? {} : { deliveryId }),
    extraHeaders: {
      ...(values.contentType === undefined ? {} : { 'content-type': values.contentType }),
      ...extraHeaders,
    },
  });
  const { body, text } = answer;
  if (answer.status < 200 || answer.status > 299) {
    throw new CliError(`${answer.status} ${describeProblem(body, answer.reason)}`);
  }
  // The status on stderr, so that stdout stays the answer's JSON for scripts.
  ctx.stderr.write(`${`${answer.status} ${answer.reason}`.trimEnd()}\n`);
  ctx.stdout.write(`${body === undefined ? text : JSON.stringify(body, null, 2)}\n`);
  if (values.wait !== true) return 0;
  const jobIds = jobIdsOf(body);
  if (jobIds.length === 0) {
    ctx.stderr.write('no job to wait for\n');
    return 0;
  }
  return await waitForJobs(ctx, jobIds, { timeoutMs: values.timeout * 1000, pollMs: WAIT_POLL_MS });
}
