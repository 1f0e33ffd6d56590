/**
 * The port in front of the job table: deliveries (the dedupe keys, each the outbox of its jobs) and jobs.
 * The DynamoDB adapter implements it on AWS and locally; the in-memory adapter in unit tests.
 */
import type { DeliveryRecord, JobChanges, JobRecord } from '../core/job';

/** Result of recording a delivery: new, or one already seen. */
export type CreateDeliveryResult = { created: true } | { created: false; existing: DeliveryRecord };

/** What the open index lists: deliveries whose messages may not all be sent, and jobs whose lease ran out. */
export interface StrandedItems {
  deliveries: DeliveryRecord[];
  jobs: JobRecord[];
}

/** Reads and writes deliveries and jobs. Every job update is conditional on the version it read. */
export interface JobRepository {
  /**
   * Records a delivery unless it was seen before (then nothing is written and the existing one is returned),
   * then writes its job records. Two concurrent calls for one delivery make one set of jobs.
   */
  createDelivery(delivery: DeliveryRecord, jobs: readonly JobRecord[]): Promise<CreateDeliveryResult>;
  /**
   * Claims a delivery's content key (core/delivery-id.ts `contentKey`) for `deliveryId`, unless another
   * delivery holds it: resolves to the delivery id that holds it now (this one when it was free or already
   * its own). Kept as long as deliveries are (the table's retention).
   */
  claimContent(integration: string, contentKey: string, deliveryId: string): Promise<string>;
  /** Writes the job records that do not exist yet (an existing job is left as it is). */
  ensureJobs(jobs: readonly JobRecord[]): Promise<void>;
  /** The delivery with that id, if seen. */
  getDelivery(integration: string, deliveryId: string): Promise<DeliveryRecord | undefined>;
  /** Notes that every job message of the delivery was sent: it leaves the open index. */
  markDeliveryEnqueued(integration: string, deliveryId: string, at: string): Promise<void>;
  /** The job with that id (strongly consistent), if any. */
  getJob(jobId: string): Promise<JobRecord | undefined>;
  /**
   * Writes `changes` to a job if nobody wrote it since `job` was read, and returns the new record (version
   * bumped). `undefined` values remove attributes. Throws JobConflictError when the version moved on.
   */
  updateJob(job: JobRecord, changes: JobChanges): Promise<JobRecord>;
  /**
   * Extends the lease of an open job its owner still holds, without touching its version (so the owner's own
   * checkpoint writes do not conflict with it). False when the job is final or another owner holds it.
   */
  renewLease(jobId: string, owner: string, until: number): Promise<boolean>;
  /** Open deliveries and jobs whose lease ran out before `before` (epoch ms), at most `limit` items. */
  listStranded(before: number, limit?: number): Promise<StrandedItems>;
  /** Failed jobs, at most `limit` (the local stack parks them in its in-memory dead-letter queue again). */
  listFailed(limit?: number): Promise<JobRecord[]>;
}
