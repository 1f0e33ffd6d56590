/**
 * `docrelay jobs list|show|download`: finding jobs, a job as GET /v1/jobs/{jobId} shows it (locally through the
 * running stack's API; on AWS, or without a local API, read from the table with presigned links to the files),
 * and its stored files written to disk byte for byte.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, unlink } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { DynamoJobRepository } from '../../functions/adapters/dynamodb/job-table';
import { readIsoTime } from '../../functions/commons/iso-time';
import type { JobRecord, JobStatus } from '../../functions/core/job';
import { type JobView, toJobView } from '../../functions/core/job-view';
import { firstLine } from './ops-args';
import { resolveStackTarget, type StackTarget } from './stack-target';
import { CliError, type CommandContext } from './types';

/** Lifetime of the presigned links the CLI prints (as the jobs API's). */
const PRESIGN_SECONDS = 3600;

const JOB_ID = /^[A-Za-z0-9-]{1,64}$/;

/** Shows one job; resolves to the exit code (1 for an unknown job). */
export async function showJob(
  ctx: CommandContext,
  jobId: string,
  options: { json?: boolean },
): Promise<number> {
  const view = await findJob(ctx, jobId);
  ctx.stdout.write(options.json === true ? `${JSON.stringify(view, null, 2)}\n` : formatJobView(view));
  return 0;
}

/** The job's view from the running stack (its API locally, the table on AWS), or a CliError `no job`. */
export async function findJob(ctx: Pick<CommandContext, 'env' | 'cwd'>, jobId: string): Promise<JobView> {
  if (!JOB_ID.test(jobId)) throw new CliError(`no job ${jobId}`);
  const target = await resolveStackTarget(ctx);
  let view: JobView | undefined;
  try {
    view =
      target.kind === 'local' && target.apiUrl !== undefined
        ? await viewFromApi(target.apiUrl, jobId)
        : await viewFromTable(target, jobId);
  } finally {
    target.close();
  }
  if (view === undefined) throw new CliError(`no job ${jobId}`);
  return view;
}

/** What `docrelay jobs list` filters by. */
export interface ListOptions {
  readonly integration?: string;
  readonly status?: JobStatus;
  readonly since?: string;
  readonly delivery?: string;
  readonly limit: number;
  readonly json?: boolean;
}

/** Lists jobs newest first, as a table or JSON (the jobs API's job views, without links). */
export async function listJobs(ctx: CommandContext, options: ListOptions): Promise<number> {
  const since = options.since === undefined ? undefined : parseSince(options.since, new Date());
  const target = await resolveStackTarget(ctx);
  let jobs: JobRecord[];
  try {
    const repository = new DynamoJobRepository(target.clients.dynamodb, target.tableName);
    ({ jobs } = await repository.listJobs({
      ...(options.integration === undefined ? {} : { integration: options.integration }),
      ...(options.status === undefined ? {} : { status: options.status }),
      ...(since === undefined ? {} : { since }),
      ...(options.delivery === undefined ? {} : { deliveryId: options.delivery }),
      limit: options.limit,
    }));
  } finally {
    target.close();
  }
  const views = await Promise.all(jobs.map((job) => toJobView(job)));
  if (options.json === true) {
    ctx.stdout.write(`${JSON.stringify(views, null, 2)}\n`);
    return 0;
  }
  ctx.stdout.write(formatJobList(views));
  return 0;
}

/**
 * `--since`: an ISO 8601 time, or a duration back from now (`90s`, `30m`, `2h`, `7d`); else a usage error.
 * A date the calendar does not have (February 30) is refused: `Date.parse` would roll it over into March.
 */
export function parseSince(text: string, now: Date): string {
  const duration = /^(\d+)([smhd])$/.exec(text.trim());
  if (duration !== null) {
    const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[duration[2] as 's' | 'm' | 'h' | 'd'];
    return new Date(now.getTime() - Number(duration[1]) * unit).toISOString();
  }
  const reading = readIsoTime(text);
  if (reading.ok) return new Date(reading.ms).toISOString();
  if (reading.reason === 'no-such-date') {
    const month = text.trim().slice(0, 7);
    throw new CliError(
      `--since must be a date that exists, got "${text}" (${month} has ${reading.daysInMonth} days)`,
      2,
    );
  }
  throw new CliError(
    `--since must be an ISO 8601 time or a duration such as 30m, 2h or 1d, got "${text}"`,
    2,
  );
}

/** One line per job: received, job id, status, integration/rule, delivery, attempts. */
export function formatJobList(views: readonly JobView[]): string {
  if (views.length === 0) return 'no jobs\n';
  const rows = [
    ['RECEIVED', 'JOB', 'STATUS', 'INTEGRATION/RULE', 'DELIVERY', 'ATTEMPTS'],
    ...views.map((v) => [
      v.receivedAt,
      v.jobId,
      v.status,
      `${v.integration}/${v.rule}`,
      v.deliveryId,
      String(v.attempts),
    ]),
  ].map((row) => row.map((cell) => cell.replace(/\p{Cc}/gu, '?')));
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  return `${rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

/** Writes each stored file of the job to `out`, byte for byte, checked against its recorded SHA-256. */
export async function downloadJob(
  ctx: CommandContext,
  jobId: string,
  options: { out: string },
): Promise<number> {
  const view = await findJob(ctx, jobId);
  if (view.files.length === 0) {
    throw new CliError(
      `job ${jobId} is ${view.status}: it has no stored files${view.status === 'failed' ? '' : ' yet'}`,
    );
  }
  const dir = resolve(ctx.cwd, options.out);
  await mkdir(dir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
    // A path that is a file, or a folder that cannot be made: said on one line, not as Node's error.
    const why =
      error.code === 'EEXIST' || error.code === 'ENOTDIR'
        ? 'it is a file, not a folder'
        : error.code === 'EACCES' || error.code === 'EPERM'
          ? 'permission denied'
          : (error.code ?? 'it cannot be made');
    throw new CliError(`--out ${options.out}: ${why}`);
  });
  const target = await resolveStackTarget(ctx);
  try {
    for (const file of view.files) {
      const path = join(dir, safeFilename(file.filename ?? basename(file.key)));
      const written = await downloadObject(target, file.bucket, file.key, path);
      if ((file.sha256 !== '' && written.sha256 !== file.sha256) || written.size !== file.size) {
        await unlink(path).catch(() => undefined);
        throw new CliError(
          `s3://${file.bucket}/${file.key} does not match the job's record (size or SHA-256)`,
        );
      }
      ctx.stdout.write(`${path}  ${written.size} bytes  sha256 ${written.sha256}\n`);
    }
  } finally {
    target.close();
  }
  return 0;
}

/** A file name without directories or control characters (the service chose it). */
function safeFilename(name: string): string {
  const base = basename(name.replace(/\\/g, '/')).replace(/\p{Cc}/gu, '_');
  return base === '' || base === '.' || base === '..' ? 'document' : base;
}

/** Streams one object to `path` (through a temporary file), hashing it on the way. */
async function downloadObject(
  target: StackTarget,
  bucket: string,
  key: string,
  path: string,
): Promise<{ size: number; sha256: string }> {
  const object = await target.clients.s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const body = object.Body;
  if (!(body instanceof Readable)) throw new CliError(`s3://${bucket}/${key} has no body`);
  const hash = createHash('sha256');
  let size = 0;
  const tmp = `${path}.${process.pid}.part`;
  try {
    await pipeline(
      body,
      async function* (chunks: AsyncIterable<Buffer>) {
        for await (const chunk of chunks) {
          hash.update(chunk);
          size += chunk.length;
          yield chunk;
        }
      },
      createWriteStream(tmp),
    );
    await rename(tmp, path);
  } catch (error) {
    await unlink(tmp).catch(() => undefined);
    throw error;
  }
  return { size, sha256: hash.digest('hex') };
}

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
