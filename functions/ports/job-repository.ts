/**
 * The port in front of the job table: deliveries (the dedupe keys, each the outbox of its jobs) and jobs.
 * The DynamoDB adapter implements it on AWS and locally; the in-memory adapter in unit tests.
 */
import { DocrelayError } from '../commons/errors';
import type { DeliveryRecord, JobChanges, JobRecord, JobStatus } from '../core/job';

/**
 * Result of recording a delivery: new, or a duplicate of `duplicateOf`: this delivery id seen before
 * (`existing` is its record), or its content held by another delivery id (`existing` may then be left out).
 */
export type CreateDeliveryResult =
  | { created: true }
  | { created: false; duplicateOf: string; existing?: DeliveryRecord };

/** What `ensureJobs` found: the jobs it wrote, and existing ones that no worker has touched yet. */
export interface EnsuredJobs {
  created: string[];
  untouched: string[];
}

/** What the open index lists: deliveries whose messages may not all be sent, and jobs whose lease ran out. */
export interface StrandedItems {
  deliveries: DeliveryRecord[];
  jobs: JobRecord[];
}

/** What `listJobs` looks for: every field narrows the list. */
export interface JobListQuery {
  readonly integration?: string;
  readonly status?: JobStatus;
  /** ISO 8601 time: only jobs received at or after it. */
  readonly since?: string;
  /** Only the jobs of this delivery id (of any integration). */
  readonly deliveryId?: string;
  /** Jobs per page. @default 50, at most 100 */
  readonly limit?: number;
  /** Where the previous page stopped (its `cursor`); opaque. */
  readonly cursor?: string;
}

/** One page of jobs, newest first; `cursor` is set when there may be more. */
export interface JobListPage {
  jobs: JobRecord[];
  cursor?: string;
}

/** Jobs per page of `listJobs`: the default, and the most a caller may ask for. */
export const JOB_LIST_LIMITS = { default: 50, max: 100 } as const;

/** A list cursor the repository did not hand out (or from another query): the caller's mistake. */
export class InvalidCursorError extends DocrelayError {
  override name = 'InvalidCursorError';
  constructor() {
    super('INVALID_CURSOR', 'the cursor is not one this list handed out');
  }
}

/** Opaque cursors: base64url JSON, read back through `parse` (which validates it), else InvalidCursorError. */
export const listCursor = {
  encode: (value: unknown): string => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url'),
  decode<T>(cursor: string, parse: (value: unknown) => T | undefined): T {
    let value: unknown;
    try {
      value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    } catch {
      throw new InvalidCursorError();
    }
    const parsed = parse(value);
    if (parsed === undefined) throw new InvalidCursorError();
    return parsed;
  },
};

/** A cursor parser for `{ [field]: string }`, the shape of the single-key cursors. */
export const stringFieldCursor =
  (field: string) =>
  (value: unknown): string | undefined => {
    const found =
      typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[field] : undefined;
    return typeof found === 'string' ? found : undefined;
  };

/** The page size a list query asks for, within JOB_LIST_LIMITS. */
export const listLimit = (query: Pick<JobListQuery, 'limit'>): number =>
  Math.max(1, Math.min(JOB_LIST_LIMITS.max, Math.floor(query.limit ?? JOB_LIST_LIMITS.default)));

/** True when the job matches the query's filters (integration, status, since, delivery id). */
export function matchesListQuery(job: JobRecord, query: JobListQuery): boolean {
  return (
    (query.integration === undefined || job.integration === query.integration) &&
    (query.status === undefined || job.status === query.status) &&
    (query.since === undefined || job.receivedAt >= query.since) &&
    (query.deliveryId === undefined || job.deliveryId === query.deliveryId)
  );
}

/** The key jobs are listed by: newest first means this key descending. */
export const listSortKey = (job: Pick<JobRecord, 'receivedAt' | 'jobId'>): string =>
  `${job.receivedAt}#${job.jobId}`;

/** What a worker's claim of a job says (JobRepository.claimJob). */
export interface JobClaim {
  readonly jobId: string;
  /** Who claims: the message being processed. */
  readonly owner: string;
  /** Epoch ms the claim holds the job until. */
  readonly leaseUntil: number;
  /** Epoch ms now: a lease held by another owner until later blocks the claim. */
  readonly nowMs: number;
  /** Attempts already made at which the claim is refused (the caller then decides, reading the job). */
  readonly maxAttempts: number;
  /**
   * A lease already running until a time within this range (epoch ms) is kept instead of `leaseUntil`: it
   * outlasts the heartbeat's first renewal, and keeping it leaves the open index's entry unwritten.
   */
  readonly keepLeaseWithin?: { readonly from: number; readonly to: number };
}

/** Reads and writes deliveries and jobs. Every job update is conditional on the version it read. */
export interface JobRepository {
  /**
   * Records a delivery with its job records, unless it was seen before: its id, or, with a `contentKey`
   * (core/delivery-id.ts), its content under another id. A duplicate writes no job; two concurrent calls for
   * one delivery make one set of jobs. Not all or nothing: a failure after the delivery's write throws, its jobs
   * perhaps unwritten, and its duplicate's answer writes them (core/outbox.ts). A content key is kept as long as
   * deliveries are (the table's retention). Given every job it plans (`holdsEveryPlannedJob`), the delivery is
   * recorded closed and its jobs lose `closesDelivery`; otherwise it stays open (listed by `listStranded` once
   * its grace has run out) until closed or marked enqueued.
   */
  createDelivery(
    delivery: DeliveryRecord,
    jobs: readonly JobRecord[],
    contentKey?: string,
  ): Promise<CreateDeliveryResult>;
  /**
   * Writes the job records that do not exist yet (an existing job is left as it is): the ids of the ones it
   * wrote, and of the existing ones still waiting for their first pickup (`awaitsFirstPickup`).
   */
  ensureJobs(jobs: readonly JobRecord[]): Promise<EnsuredJobs>;
  /** The delivery with that id, if seen. */
  getDelivery(integration: string, deliveryId: string): Promise<DeliveryRecord | undefined>;
  /**
   * Notes that the delivery's messages could not be sent (or its jobs written), and opens it again for its
   * grace, so the reconciler completes it if nobody retries (best effort: each job's first-pickup lease covers
   * a failure here).
   */
  markDeliverySendFailed(integration: string, deliveryId: string, at: string): Promise<void>;
  /**
   * A worker's first pickup of the delivery's last job (`closesDelivery`): the delivery's messages went out, so
   * it leaves the open index, unless its ingest noted a failed send or it was closed already. Resolves the
   * delivery as written when it closed it (one call both closes and reads it), undefined when nothing changed.
   */
  closeDelivery(integration: string, deliveryId: string, at: string): Promise<DeliveryRecord | undefined>;
  /** Notes that every job message of the delivery was sent: it leaves the open index. */
  markDeliveryEnqueued(integration: string, deliveryId: string, at: string): Promise<void>;
  /** The job with that id (strongly consistent), if any. */
  getJob(jobId: string): Promise<JobRecord | undefined>;
  /**
   * A worker's claim in one write, without reading the job first: when the job is `queued` or `processing`,
   * has made fewer than `maxAttempts` attempts and nobody else holds its lease at `nowMs`, it becomes
   * `processing`, held by `owner` until `leaseUntil`, with one attempt more, and is returned as written.
   * Undefined when any of that does not hold (or the job does not exist): the caller reads the job and decides.
   */
  claimJob(claim: JobClaim): Promise<JobRecord | undefined>;
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
  /**
   * Jobs newest first (by receipt), narrowed by the query, a page at a time. Throws InvalidCursorError for a
   * cursor it did not hand out.
   */
  listJobs(query: JobListQuery): Promise<JobListPage>;
  /** Every delivery with this id (one per integration that received it), newest first. */
  findDeliveries(deliveryId: string): Promise<DeliveryRecord[]>;
}
