/**
 * `docrelay tail [--integration <id>] [--interval <seconds>] [--json]`: one line whenever a job appears or its
 * status changes, until Ctrl-C. It polls the newest jobs (listJobs) at a bounded interval, locally or on AWS.
 */
import { DynamoJobRepository } from '../../functions/adapters/dynamodb/job-table';
import type { JobRecord } from '../../functions/core/job';
import { resolveStackTarget } from './stack-target';
import type { CommandContext } from './types';

/** What `docrelay tail` takes. */
export interface TailOptions {
  readonly integration?: string;
  /** Seconds between two looks. */
  readonly interval: number;
  readonly json?: boolean;
}

/** How many of the newest jobs each look reads. */
const WINDOW = 100;

/** One line of the tail: a job that appeared or changed. */
export function tailLine(job: JobRecord, json: boolean): string {
  if (json) {
    return JSON.stringify({
      at: job.updatedAt,
      jobId: job.jobId,
      status: job.status,
      integration: job.integration,
      rule: job.rule,
      deliveryId: job.deliveryId,
      attempts: job.attempts,
      ...(job.error === undefined ? {} : { error: job.error }),
    });
  }
  const error = job.error ?? (job.status === 'failed' ? undefined : job.lastError);
  const tail = error === undefined ? '' : `  ${error.code}: ${error.message.replace(/\s+/g, ' ')}`;
  return `${job.updatedAt}  ${job.jobId}  ${job.status.padEnd(10)}  ${job.integration}/${job.rule}  delivery ${job.deliveryId}  attempts ${job.attempts}${tail}`.replace(
    /\p{Cc}/gu,
    '?',
  );
}

/**
 * Follows the jobs until `signal` aborts: the first look prints the newest few as they are, later looks only
 * what changed. Resolves to the exit code.
 */
export async function tailJobs(
  ctx: CommandContext,
  options: TailOptions,
  signal: AbortSignal,
  sleep: (ms: number, signal: AbortSignal) => Promise<void> = abortableSleep,
): Promise<number> {
  const target = await resolveStackTarget(ctx);
  const seen = new Map<string, string>();
  try {
    const repository = new DynamoJobRepository(target.clients.dynamodb, target.tableName);
    let first = true;
    while (!signal.aborted) {
      const { jobs } = await repository.listJobs({
        ...(options.integration === undefined ? {} : { integration: options.integration }),
        limit: WINDOW,
      });
      // Oldest first, so the lines read in order.
      const changed = [...jobs]
        .reverse()
        .filter((job) => seen.get(job.jobId) !== `${job.status}/${job.attempts}`);
      for (const job of first ? changed.slice(-10) : changed)
        ctx.stdout.write(`${tailLine(job, options.json === true)}\n`);
      for (const job of changed) seen.set(job.jobId, `${job.status}/${job.attempts}`);
      // Bounded memory: forget jobs that left the window.
      if (seen.size > WINDOW * 4) {
        const keep = new Set(jobs.map((job) => job.jobId));
        for (const jobId of seen.keys()) if (!keep.has(jobId)) seen.delete(jobId);
      }
      if (first && options.json !== true) {
        ctx.stderr.write(
          `following jobs${options.integration === undefined ? '' : ` of ${options.integration}`} (Ctrl-C stops)\n`,
        );
      }
      first = false;
      await sleep(options.interval * 1000, signal);
    }
  } finally {
    target.close();
  }
  return 0;
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(finish, ms);
    function finish(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      done();
    }
    signal.addEventListener('abort', finish, { once: true });
  });
}

/** The `tail` command: runs until SIGINT or SIGTERM, then exits 0. */
export async function run(ctx: CommandContext, options: TailOptions): Promise<number> {
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    return await tailJobs(ctx, options, controller.signal);
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
