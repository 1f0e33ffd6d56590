/**
 * Completing a delivery's outbox, used by the ingest (a duplicate whose first attempt did not get its messages
 * out), the event ingest and the reconciler: write the missing job records, send each job still waiting for its
 * first pickup, mark the delivery enqueued. Every step is idempotent; twice costs only duplicate messages.
 * Which deliveries stay open for this, and for how long: docs/architecture.md, "Queue".
 */
import type { JobQueue } from '../ports/job-queue';
import type { JobRepository } from '../ports/job-repository';
import { type DeliveryRecord, newJobRecords } from './job';

/** What completing an outbox needs. */
export interface OutboxDeps {
  readonly jobs: JobRepository;
  readonly queue: JobQueue;
}

/**
 * How long a new delivery belongs to the ingest that recorded it: its jobs are written and sent by that
 * ingest alone, and the reconciler leaves it alone. Longer than any ingest may run (API Gateway's 30 s).
 */
export const ENQUEUE_GRACE_MS = 60_000;

type OutboxDelivery = Pick<DeliveryRecord, 'integration' | 'deliveryId' | 'receivedAt' | 'jobs'>;

/**
 * Completes the delivery's outbox (after its grace): missing jobs written, those and the existing ones still
 * waiting for their first pickup sent (the ingest may have died before sending them), the delivery marked.
 * With `resendUntouched: false` (the reconciler, while the queue holds messages they may be waiting in) the
 * existing jobs are left to their own first-pickup lease. Returns the ids of the jobs it sent.
 */
export async function completeOutbox(
  deps: OutboxDeps,
  delivery: OutboxDelivery,
  nowMs: number,
  options: { resendUntouched?: boolean } = {},
): Promise<string[]> {
  const ensured = await deps.jobs.ensureJobs(newJobRecords(delivery, nowMs));
  const send =
    options.resendUntouched === false ? ensured.created : [...ensured.created, ...ensured.untouched];
  if (send.length > 0) await deps.queue.send(send);
  await deps.jobs.markDeliveryEnqueued(
    delivery.integration,
    delivery.deliveryId,
    new Date(nowMs).toISOString(),
  );
  return send;
}

/**
 * Within the delivery's grace (its recording ingest may still be at work): sends a message for each of its
 * jobs that exists and waits for its first pickup, and writes nothing. A sender's retry after an ingest that
 * failed to send gets its jobs moving at once; jobs not written yet are the reconciler's after the grace.
 */
export async function resendWaiting(deps: OutboxDeps, delivery: OutboxDelivery): Promise<void> {
  const waiting = await deps.jobs.waitingJobs(delivery.jobs.map(({ jobId }) => jobId));
  if (waiting.length > 0) await deps.queue.send(waiting);
}

/** True while the delivery is within its grace: only its recording ingest writes its jobs. */
export const withinGrace = (delivery: Pick<DeliveryRecord, 'receivedAt'>, nowMs: number): boolean =>
  nowMs < Date.parse(delivery.receivedAt) + ENQUEUE_GRACE_MS;
