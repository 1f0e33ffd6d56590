/**
 * Which jobs `docrelay replay` and `docrelay dlq redrive` may run again, and the reset that sends one back to
 * the worker. The caller sends the job message; the renewed lease lets the reconciler resend a lost one.
 */

import { DocrelayError } from '../commons/errors';
import type { JobRepository } from '../ports/job-repository';
import { type JobRecord, transitions } from './job';

/** How long a replayed job may wait for a worker before the reconciler sends its message again. */
export const REPLAY_PICKUP_MS = 15 * 60_000;

/** Options of a replay. */
export interface ReplayOptions {
  /** Drop the document and files, so the worker generates a new document. @default false */
  readonly fresh?: boolean;
  /** Epoch milliseconds now. @default Date.now */
  readonly now?: () => number;
  /** Lease of the reset job (see REPLAY_PICKUP_MS). @default REPLAY_PICKUP_MS */
  readonly pickupMs?: number;
}

/** A job that cannot be replayed in its state; the message says why in one line. */
export class ReplayRefusedError extends DocrelayError {
  override name = 'ReplayRefusedError';
  constructor(message: string) {
    super('REPLAY_REFUSED', message);
  }
}

/**
 * Why the job cannot be replayed, or undefined when it can: a `failed` job always can; a `stored` one only
 * fresh (from its last checkpoint there is nothing left to do); an open one is still being worked on.
 */
export function replayRefusal(
  job: JobRecord,
  options: Pick<ReplayOptions, 'fresh'> = {},
): string | undefined {
  switch (job.status) {
    case 'failed':
      return undefined;
    case 'stored':
      return options.fresh === true
        ? undefined
        : `job ${job.jobId} is stored already; replay --fresh generates a new document`;
    default:
      return `job ${job.jobId} is ${job.status}: it is still in progress (the worker or the reconciler finishes it)`;
  }
}

/** True when a checkpointed document's links should still live and some file is left to copy. */
function canResumeCopy(job: JobRecord, nowMs: number): boolean {
  const document = job.document;
  return (
    document?.sealedLinks !== undefined &&
    Date.parse(document.linksExpireAt) > nowMs &&
    job.files.some((file) => file.storedAt === undefined)
  );
}

/**
 * Resets a job from its last checkpoint (`created` while its links live, so the worker copies), or with
 * `fresh` from the start; the error moves to `lastError` and the lease is renewed. Throws ReplayRefusedError
 * (see replayRefusal), or JobConflictError when the job changed meanwhile.
 */
export async function resetJobForReplay(
  store: Pick<JobRepository, 'updateJob'>,
  job: JobRecord,
  options: ReplayOptions = {},
): Promise<JobRecord> {
  const refusal = replayRefusal(job, options);
  if (refusal !== undefined) throw new ReplayRefusedError(refusal);
  const now = (options.now ?? Date.now)();
  return store.updateJob(
    job,
    transitions.replay(job, {
      fresh: options.fresh === true,
      resumeCopy: canResumeCopy(job, now),
      leaseUntil: now + (options.pickupMs ?? REPLAY_PICKUP_MS),
    }),
  );
}
