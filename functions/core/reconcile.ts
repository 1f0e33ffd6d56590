/**
 * The reconciler: makes sure no open job is stranded. A delivery whose messages may not all have been sent
 * (the ingest crashed, or the queue failed and the sender never retried) gets its missing job records and
 * messages; a job whose lease ran out without progress gets a message again. Worker processing is idempotent
 * (a leased or final job ignores an extra message), so sending again is always safe.
 * On AWS it runs on a schedule; the local stack runs it at start-up (its queue keeps messages in memory only)
 * and on an interval.
 */

import type { JobStore } from '../adapters/dynamodb/job-table';
import type { JobQueue } from '../adapters/sqs/job-queue';
import { newJobRecord } from './accept-delivery';
import type { Log } from './process-job';

/** What reconciling needs. */
export interface ReconcileDeps {
  readonly jobs: JobStore;
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
 * One pass: everything whose lease ran out before `before` (epoch ms; `Infinity` at the local stack's
 * start-up, when its queue is empty) is completed or sent again. Bounded by `limit` items.
 */
export async function reconcile(deps: ReconcileDeps, before?: number, limit = 500): Promise<ReconcileResult> {
  const now = deps.now ?? Date.now;
  const result: ReconcileResult = { deliveriesCompleted: 0, jobsResent: 0 };
  const stranded = await deps.jobs.listStranded(before ?? now(), limit);
  for (const delivery of stranded.deliveries) {
    const at = now();
    await deps.jobs.ensureJobs(
      delivery.jobs.map((plan) =>
        newJobRecord(delivery.integration, delivery.deliveryId, delivery.receivedAt, at, plan),
      ),
    );
    await deps.queue.send(delivery.jobs.map(({ jobId }) => ({ v: 1, jobId })));
    await deps.jobs.markDeliveryEnqueued(
      delivery.integration,
      delivery.deliveryId,
      new Date(at).toISOString(),
    );
    deps.log.warn('completed a delivery whose messages were not all sent', {
      integration: delivery.integration,
      deliveryId: delivery.deliveryId,
      jobs: delivery.jobs.length,
    });
    result.deliveriesCompleted += 1;
  }
  const seen = new Set(stranded.deliveries.flatMap((delivery) => delivery.jobs.map((job) => job.jobId)));
  for (const job of stranded.jobs) {
    if (seen.has(job.jobId)) continue;
    try {
      // Renew the lease first: a resend that wins a race with a worker's claim only costs one skipped message.
      await deps.jobs.updateJob(job, { leaseUntil: now() + deps.leaseMs, leaseOwner: undefined });
    } catch {
      continue; // A worker moved it on meanwhile: not stranded.
    }
    await deps.queue.send([{ v: 1, jobId: job.jobId }]);
    deps.log.warn('sent a stranded job again', { jobId: job.jobId, status: job.status });
    result.jobsResent += 1;
  }
  return result;
}
