/**
 * `docrelay jobs show <jobId> [--json]`: a job as GET /v1/jobs/{jobId} shows it. Locally through the running
 * stack's API; on AWS (or without a local API) read from the table, with presigned links to the files.
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { DynamoJobRepository } from '../../functions/adapters/dynamodb/job-table';
import { type JobView, toJobView } from '../../functions/core/job-view';
import { firstLine, parseCommandArgs, requirePositionals } from './ops-args';
import { resolveStackTarget, type StackTarget } from './stack-target';
import { CliError, type CommandRun } from './types';

const USAGE = 'usage: docrelay jobs show <jobId> [--json]';

/** Lifetime of the presigned links the CLI prints (as the jobs API's). */
const PRESIGN_SECONDS = 3600;

/** Shows one job; resolves to the exit code (1 for an unknown job). */
export const run: CommandRun = async (ctx) => {
  const { values, positionals } = parseCommandArgs(ctx.argv, { json: { type: 'boolean' } }, USAGE);
  const [action, jobId] = requirePositionals(positionals, ['action', 'jobId'], USAGE);
  if (action !== 'show') throw new CliError(`unknown action "${action}" (${USAGE})`, 2);
  if (!/^[A-Za-z0-9-]{1,64}$/.test(jobId as string)) throw new CliError(`no job ${jobId}`);

  const target = await resolveStackTarget(ctx);
  let view: JobView | undefined;
  try {
    view =
      target.kind === 'local' && target.apiUrl !== undefined
        ? await viewFromApi(target.apiUrl, jobId as string)
        : await viewFromTable(target, jobId as string);
  } finally {
    target.close();
  }
  if (view === undefined) throw new CliError(`no job ${jobId}`);
  ctx.stdout.write(values.json === true ? `${JSON.stringify(view, null, 2)}\n` : formatJobView(view));
  return 0;
};

/** Reads the job from the table and presigns its files' links (what the jobs API does). */
export async function viewFromTable(target: StackTarget, jobId: string): Promise<JobView | undefined> {
  const job = await new DynamoJobRepository(target.clients.dynamodb, target.tableName).getJob(jobId);
  if (job === undefined) return undefined;
  return toJobView(job, (bucket, key) =>
    getSignedUrl(target.clients.s3, new GetObjectCommand({ Bucket: bucket, Key: key }), {
      expiresIn: PRESIGN_SECONDS,
    }),
  );
}

async function viewFromApi(apiUrl: string, jobId: string): Promise<JobView | undefined> {
  let response: Response;
  try {
    response = await fetch(`${apiUrl.replace(/\/+$/, '')}/v1/jobs/${encodeURIComponent(jobId)}`, {
      signal: AbortSignal.timeout(30_000),
    });
  } catch (error) {
    throw new CliError(
      `cannot reach the local stack at ${apiUrl}: ${firstLine((error as { cause?: unknown }).cause ?? error)}`,
    );
  }
  if (response.status === 404) return undefined;
  const text = await response.text();
  if (!response.ok) throw new CliError(`the jobs API answered ${response.status}`);
  try {
    return JSON.parse(text) as JobView;
  } catch {
    throw new CliError('the jobs API answered something other than JSON');
  }
}

/** The human form of a job view: one field per line, each file with its key, size, SHA-256 and link. */
export function formatJobView(view: JobView): string {
  const lines = [
    `job ${view.jobId}: ${view.status}`,
    `  integration  ${view.integration} (rule ${view.rule})`,
    `  delivery     ${view.deliveryId}`,
    `  attempts     ${view.attempts}`,
    `  received     ${view.receivedAt}`,
    `  updated      ${view.updatedAt}`,
  ];
  if (view.document !== undefined) {
    const template = `${view.document.templateId}${view.document.templateFileId === undefined ? '' : `/${view.document.templateFileId}`}`;
    lines.push(`  document     ${view.document.id} "${view.document.name}" (template ${template})`);
  }
  if (view.files.length === 0) lines.push('  files        none stored');
  for (const file of view.files) {
    lines.push(`  file         s3://${file.bucket}/${file.key}`);
    lines.push(`               ${file.size} bytes, ${file.mimeType}, sha256 ${file.sha256}`);
    if (file.downloadUrl !== undefined) lines.push(`               ${file.downloadUrl}`);
  }
  if (view.error !== undefined)
    lines.push(`  error        ${view.error.code}: ${oneLine(view.error.message)}`);
  if (view.lastError !== undefined) {
    lines.push(`  last error   ${view.lastError.code}: ${oneLine(view.lastError.message)}`);
  }
  return `${lines.join('\n')}\n`;
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ');
