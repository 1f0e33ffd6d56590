/**
 * Completing a delivery's outbox, written once and used by the ingest (a new delivery, and a duplicate whose
 * first attempt did not get its messages out), the event ingest and the reconciler: write the job records
 * that are missing, send one message per job, then mark the delivery enqueued. Every step is idempotent, so
 * completing twice costs only duplicate messages, which the worker drops.
 */
import type { JobQueue } from '../ports/job-queue';
import type { JobRepository } from '../ports/job-repository';
import { type DeliveryRecord, newJobRecord } from './job';

/** What completing an outbox needs. */
export interface OutboxDeps {
  readonly jobs: JobRepository;
  readonly queue: JobQueue;
}

/**
 * Completes the delivery's outbox. `jobsWritten` says the job records were written already (a new delivery:
 * the repository wrote them with it), saving one write per job.
 */
export async function completeOutbox(
  deps: OutboxDeps,
  delivery: Pick<DeliveryRecord, 'integration' | 'deliveryId' | 'receivedAt' | 'jobs'>,
  nowMs: number,
  options: { jobsWritten?: boolean } = {},
): Promise<void> {
  if (options.jobsWritten !== true) {
    await deps.jobs.ensureJobs(
      delivery.jobs.map((plan) =>
        newJobRecord(delivery.integration, delivery.deliveryId, delivery.receivedAt, nowMs, plan),
      ),
    );
  }
  await deps.queue.send(delivery.jobs.map(({ jobId }) => jobId));
  await deps.jobs.markDeliveryEnqueued(
    delivery.integration,
    delivery.deliveryId,
    new Date(nowMs).toISOString(),
  );
}
