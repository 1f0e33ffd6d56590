/**
 * The e2e tests' two waits for a stack to settle: jobs reaching a status (read over the API, from the table or
 * any other way) and the jobs queue drained. Both are bounded and say on timeout what they saw last.
 */
import { type WaitOptions, waitUntil } from './wait';

/** The statuses a job ends in. */
export const FINAL_STATUSES: readonly string[] = ['stored', 'failed'];

/** How to wait for jobs, beyond how long. */
export interface JobWaitOptions<Job> extends WaitOptions {
  /** The statuses to wait for. @default FINAL_STATUSES */
  readonly statuses?: readonly string[];
  /** What the jobs show on timeout (they are the last read). @default each job's status */
  readonly describe?: (jobs: readonly (Job | undefined)[]) => string;
  /** Checked each round: a reason to stop waiting at once (a process that died), or undefined. */
  readonly giveUp?: () => string | undefined;
}

/**
 * Waits until every job has one of the statuses, reading each with `read` (undefined: not there yet), and
 * returns them in the order of `jobIds`. Reads in groups of 20: the local DynamoDB is single-threaded.
 */
export async function waitForJobs<Job extends { readonly status: string }>(
  read: (jobId: string) => Promise<Job | undefined>,
  jobIds: readonly string[],
  options: JobWaitOptions<Job> = {},
): Promise<Job[]> {
  const statuses = options.statuses ?? FINAL_STATUSES;
  let last: (Job | undefined)[] = [];
  const describe =
    options.describe ??
    ((jobs: readonly (Job | undefined)[]) =>
      JSON.stringify(jobs.map((job, i) => ({ jobId: jobIds[i], status: job?.status ?? 'missing' }))));
  return waitUntil(
    `${jobIds.length <= 3 ? `jobs ${jobIds.join(', ')}` : `${jobIds.length} jobs`} to be ${statuses.join(' or ')}`,
    async () => {
      const reason = options.giveUp?.();
      if (reason !== undefined) throw new GiveUpError(reason);
      const jobs: (Job | undefined)[] = [];
      for (let i = 0; i < jobIds.length; i += 20)
        jobs.push(...(await Promise.all(jobIds.slice(i, i + 20).map(read))));
      last = jobs;
      return jobs.every((job) => job !== undefined && statuses.includes(job.status))
        ? (jobs as Job[])
        : undefined;
    },
    {
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.intervalMs === undefined ? {} : { intervalMs: options.intervalMs }),
      describe: () => describe(last),
      stopOn: (error) => error instanceof GiveUpError,
    },
  );
}

/** The queue counts a drain wait reads. */
export interface QueueCounts {
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
}

/** Waits until the jobs queue holds no message at all (visible, in flight or delayed). */
export async function waitForQueueDrained(
  t: { queueCounts(): Promise<QueueCounts> },
  timeoutMs = 30_000,
): Promise<void> {
  await waitUntil(
    'the jobs queue to drain',
    async () => {
      const counts = await t.queueCounts();
      return counts.visible + counts.inFlight + counts.delayed === 0 ? true : undefined;
    },
    { timeoutMs, intervalMs: 250, describe: async () => JSON.stringify(await t.queueCounts()) },
  );
}

/** A wait that must end now, not at its timeout. */
class GiveUpError extends Error {}
