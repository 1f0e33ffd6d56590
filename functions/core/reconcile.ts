/**
 * The reconciler: makes sure no open job is stranded. A delivery whose messages may not all have been sent
 * (the ingest crashed, or the queue failed and the sender never retried) has its outbox completed; a job
 * whose lease ran out without progress gets a message again. Worker processing is idempotent (a leased or
 * final job ignores an extra message), so sending again is always safe.
 * On AWS it runs on a schedule; the local stack runs it at start-up (its queue keeps messages in memory only)
 * and on an interval.
 */
import type { JobQueue } from '../ports/job-queue';
import type { JobRepository } from '../ports/job-repository';
import { JobConflictError } from './errors';
import { transitions } from './job';
import type { Log } from './lease';
import { completeOutbox } from './outbox';

/** What reconciling needs. */
export interface ReconcileDeps {
  readonly jobs: JobRepository;
  readonly queue: JobQueue;
  readonly log: Log;
  /** How long after a resend a job's lease runs (so one tick does not resend it again). */
  readonly leaseMs: number;
  readonly now?: () => number;
}

/** What one pass did. */
export interface ReconcileResult {
  deliveriesCompleted: number;
  jobsResent: number;
}

/**
 * One pass: everything whose lease ran out before `before` (epoch ms; `Number.MAX_SAFE_INTEGER` at the local
 * stack's start-up, when its queue is empty) is completed or sent again. Bounded by `limit` items.
 */
export async function reconcile(deps: ReconcileDeps, before?: number, limit = 500): Promise<ReconcileResult> {
  const now = deps.now ?? Date.now;
  const result: ReconcileResult = { deliveriesCompleted: 0, jobsResent: 0 };
  const stranded = await deps.jobs.listStranded(before ?? now(), limit);
  // Jobs sent by completing their delivery (just written, so not listed as stranded): not sent twice.
  const seen = new Set<string>();
  for (const delivery of stranded.deliveries) {
    for (const jobId of await completeOutbox(deps, delivery, now())) seen.add(jobId);
    deps.log.warn('completed a delivery whose messages were not all sent', {
      integration: delivery.integration,
      deliveryId: delivery.deliveryId,
      jobs: delivery.jobs.length,
    });
    result.deliveriesCompleted += 1;
  }
  for (const job of stranded.jobs) {
    if (seen.has(job.jobId)) continue;
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
