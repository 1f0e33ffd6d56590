/**
 * The reconciler: an open delivery past its grace has its outbox completed; a job whose lease ran out is sent
 * again (workers ignore extra messages), unless the queue holds messages it may be waiting among (up to
 * `maxQueueWaitMs`). Scheduled on AWS; locally at start-up and on an interval. Why: docs/decisions.md, "Reconciler".
 */
import type { JobQueue, JobQueueBacklog, QueueBacklog } from '../ports/job-queue';
import type { JobRepository } from '../ports/job-repository';
import { JobConflictError } from './errors';
import { FIRST_PICKUP_MS, transitions } from './job';
import type { Log } from './lease';
import { completeOutbox } from './outbox';
import { describeFailure } from './retry-policy';

/** What reconciling needs. */
export interface ReconcileDeps {
  readonly jobs: JobRepository;
  readonly queue: JobQueue & JobQueueBacklog;
  readonly log: Log;
  /** How long after a resend a job's lease runs (so one tick does not resend it again). */
  readonly leaseMs: number;
  /**
   * How long past its lease a job may wait while the queue holds messages before it is sent again anyway.
   * @default FIRST_PICKUP_MS (15 minutes: as long as a new job may wait for its first worker)
   */
  readonly maxQueueWaitMs?: number;
  readonly now?: () => number;
}

/** What one pass did. */
export interface ReconcileResult {
  deliveriesCompleted: number;
  jobsResent: number;
  /** Jobs past their lease left alone because the queue still holds messages they may be waiting in. */
  jobsWaiting: number;
}

/** True when the queue holds no message at all. */
const isEmpty = (backlog: QueueBacklog): boolean =>
  backlog.visible + backlog.inFlight + backlog.delayed === 0;

/**
 * One pass: everything whose lease ran out before `before` (epoch ms; `Number.MAX_SAFE_INTEGER` at the local
 * stack's start-up, when its queue is empty) is completed or sent again, except a job that may be waiting in
 * the queue (see above; never at start-up). Bounded by `limit` items.
 */
export async function reconcile(deps: ReconcileDeps, before?: number, limit = 500): Promise<ReconcileResult> {
  const now = deps.now ?? Date.now;
  const result: ReconcileResult = { deliveriesCompleted: 0, jobsResent: 0, jobsWaiting: 0 };
  const stranded = await deps.jobs.listStranded(before ?? now(), limit);
  // A `before` in the future is the local stack's start-up: its queue lost every message, whatever it holds
  // now (new deliveries may already be queued), so nothing is taken as waiting.
  const queueLost = before !== undefined && before > now();
  const anything = stranded.deliveries.length + stranded.jobs.length > 0;
  const backlog = !anything || queueLost ? undefined : await readBacklog(deps);
  const queueBusy = backlog !== undefined && !isEmpty(backlog);
  // Jobs sent by completing their delivery: not sent twice in this pass.
  const seen = new Set<string>();
  for (const delivery of stranded.deliveries) {
    // Every new delivery comes here once its grace is over (the ingest does not mark it). Its jobs that no
    // worker picked up yet are sent again only when no message can be waiting for them; otherwise their own
    // first-pickup lease covers them below.
    const sent = await completeOutbox(deps, delivery, now(), { resendUntouched: !queueBusy });
    for (const jobId of sent) seen.add(jobId);
    if (sent.length > 0) {
      deps.log.warn('completed a delivery whose messages may not all have been sent', {
        integration: delivery.integration,
        deliveryId: delivery.deliveryId,
        jobsSent: sent.length,
      });
    }
    result.deliveriesCompleted += 1;
  }
  const jobs = stranded.jobs.filter((job) => !seen.has(job.jobId));
  const waitUntil = now() - (deps.maxQueueWaitMs ?? FIRST_PICKUP_MS);
  for (const job of jobs) {
    if (queueBusy && (job.leaseUntil ?? 0) > waitUntil) {
      result.jobsWaiting += 1;
      continue;
    }
    try {
      // Renew the lease first: a resend that wins a race with a worker's claim only costs one skipped message.
      await deps.jobs.updateJob(job, transitions.resend(job, now() + deps.leaseMs));
    } catch (error) {
      if (error instanceof JobConflictError) continue; // A worker moved it on meanwhile: not stranded.
      throw error;
    }
    await deps.queue.send([job.jobId]);
    deps.log.warn('sent a stranded job again', { jobId: job.jobId, status: job.status });
    result.jobsResent += 1;
  }
  return result;
}

/**
 * For when no worker can be alive (the local workers' process died, its successor not yet polling): each job a
 * worker had claimed is sent again at once with its lease cleared, instead of waiting out the dead worker's message
 * visibility; unclaimed jobs are left to their queued messages. Returns how many were sent; bounded by `limit`.
 */
export async function releaseAbandonedLeases(deps: ReconcileDeps, limit = 500): Promise<number> {
  const now = deps.now ?? Date.now;
  const { jobs } = await deps.jobs.listStranded(Number.MAX_SAFE_INTEGER, limit);
  let released = 0;
  for (const job of jobs) {
    if (job.leaseOwner === undefined) continue;
    try {
      await deps.jobs.updateJob(job, transitions.resend(job, now() + deps.leaseMs));
    } catch (error) {
      if (error instanceof JobConflictError) continue;
      throw error;
    }
    await deps.queue.send([job.jobId]);
    released += 1;
  }
  return released;
}

/** The queue's counts, or undefined when they cannot be read (then every stranded job is sent again). */
async function readBacklog(deps: ReconcileDeps): Promise<QueueBacklog | undefined> {
  try {
    return await deps.queue.backlog();
  } catch (error) {
    const reason = describeFailure(error);
    deps.log.warn('could not read the queue backlog; sending every stranded job again', {
      code: reason.code,
      reason: reason.message,
    });
    return undefined;
  }
}
