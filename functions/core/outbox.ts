/**
 * Completing a delivery's outbox, used by the ingest (a duplicate whose first attempt did not write all its jobs
 * or send them), the event ingest and the reconciler: write the missing job records, send each job still waiting
 * for its first pickup, mark the delivery enqueued. Every step is idempotent; twice costs only duplicate messages.
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
 * How long a new delivery belongs to the ingest that recorded it (and to its sender's retries, which write what
 * it could not): the reconciler leaves it alone. Longer than any ingest may run (API Gateway's 30 s).
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
  await sendAndMark(deps, delivery, send, nowMs);
  return send;
}

/**
 * A duplicate's part within the delivery's grace: planned jobs found missing (the first attempt failed or died
 * between the delivery's write and its jobs', so its sender was answered no 2xx) are written and, with those
 * still waiting, sent, and the delivery marked. With none missing, only a first attempt that noted a failed
 * send has its waiting jobs sent again. Returns the ids of the jobs it sent.
 */
export async function completeWithinGrace(
  deps: OutboxDeps,
  delivery: OutboxDelivery & Pick<DeliveryRecord, 'sendFailedAt'>,
  nowMs: number,
): Promise<string[]> {
  // A first attempt still at work (its sender retried before its answer) is no race: both put a job only
  // where none is, and a job sent twice is claimed once.
  const ensured = await deps.jobs.ensureJobs(newJobRecords(delivery, nowMs));
  const send = [...ensured.created, ...ensured.untouched];
  if (ensured.created.length > 0) {
    await sendAndMark(deps, delivery, send, nowMs);
    return send;
  }
  if (delivery.sendFailedAt === undefined || send.length === 0) return [];
  await deps.queue.send(send);
  return send;
}

/** Sends the given jobs (if any) and marks the delivery's outbox complete. */
async function sendAndMark(
  deps: OutboxDeps,
  delivery: OutboxDelivery,
  send: readonly string[],
  nowMs: number,
): Promise<void> {
  if (send.length > 0) await deps.queue.send(send);
  await deps.jobs.markDeliveryEnqueued(
    delivery.integration,
    delivery.deliveryId,
    new Date(nowMs).toISOString(),
  );
}

/** True while the delivery is within its grace: the reconciler leaves it to its ingest and its sender's retries. */
export const withinGrace = (delivery: Pick<DeliveryRecord, 'receivedAt'>, nowMs: number): boolean =>
  nowMs < Date.parse(delivery.receivedAt) + ENQUEUE_GRACE_MS;
