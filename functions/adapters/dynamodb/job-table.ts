/**
 * The job repository on DynamoDB: deliveries (the dedupe keys) and jobs, one item each, keyed by `pk`. The
 * key schema and item mappers are in ./keys.ts, the conditions in ./conditions.ts, the outbox's writes in
 * ./delivery-writes.ts, claims, compare-and-swap updates and leases in ./job-writes.ts, and the index reads
 * in ./queries.ts; this class puts them behind the port.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { JOB_TABLE } from '../../config/table-contract';
import type { DeliveryRecord, JobChanges, JobRecord } from '../../core/job';
import { ENQUEUE_GRACE_MS } from '../../core/outbox';
import type {
  CreateDeliveryResult,
  EnsuredJobs,
  JobClaim,
  JobListPage,
  JobListQuery,
  JobRepository,
  StrandedItems,
} from '../../ports/job-repository';
import * as deliveries from './delivery-writes';
import * as jobWrites from './job-writes';
import { jobKey, toJob } from './keys';
import * as queries from './queries';
import { getItem, type JobTableContext } from './table';

export { openShard } from './keys';

/** Name of the sparse index of open deliveries and jobs, sorted by lease expiry. */
export const OPEN_JOBS_INDEX = JOB_TABLE.openJobsIndex;

/** Options of the job store. */
export interface JobStoreOptions {
  /** Days a final job and a delivery's dedupe key are kept. @default 30 */
  readonly retentionDays?: number;
  /** How long a new delivery may take to get its messages sent before the reconciler steps in. @default 60 s */
  readonly enqueueGraceMs?: number;
  /** Epoch milliseconds now. @default Date.now */
  readonly now?: () => number;
}

/** Reads and writes deliveries and jobs. Every job update is conditional on the version it read. */
export class DynamoJobRepository implements JobRepository {
  private readonly table: JobTableContext;

  constructor(
    ddb: DynamoDBDocumentClient,
    readonly tableName: string,
    options: JobStoreOptions = {},
  ) {
    this.table = {
      ddb,
      tableName,
      now: options.now ?? Date.now,
      retentionSeconds: (options.retentionDays ?? 30) * 86_400,
      enqueueGraceMs: options.enqueueGraceMs ?? ENQUEUE_GRACE_MS,
    };
  }

  createDelivery(
    delivery: DeliveryRecord,
    jobs: readonly JobRecord[],
    contentKey?: string,
  ): Promise<CreateDeliveryResult> {
    return deliveries.createDelivery(this.table, delivery, jobs, contentKey);
  }

  ensureJobs(jobs: readonly JobRecord[]): Promise<EnsuredJobs> {
    return jobWrites.ensureJobs(this.table, jobs);
  }

  getDelivery(integration: string, deliveryId: string): Promise<DeliveryRecord | undefined> {
    return deliveries.getDelivery(this.table, integration, deliveryId);
  }

  markDeliverySendFailed(integration: string, deliveryId: string, at: string): Promise<void> {
    return deliveries.markSendFailed(this.table, integration, deliveryId, at);
  }

  markDeliveryEnqueued(integration: string, deliveryId: string, at: string): Promise<void> {
    const update = 'SET enqueuedAt = :at REMOVE openPk, leaseUntil';
    return deliveries.setOnDelivery(
      this.table,
      integration,
      deliveryId,
      update,
      at,
      'mark the delivery enqueued',
    );
  }

  closeDelivery(integration: string, deliveryId: string, at: string): Promise<DeliveryRecord | undefined> {
    return deliveries.closeDelivery(this.table, integration, deliveryId, at);
  }

  async getJob(jobId: string): Promise<JobRecord | undefined> {
    const item = await getItem(this.table, jobKey(jobId), 'read a job');
    return item === undefined ? undefined : toJob(item);
  }

  claimJob(claim: JobClaim): Promise<JobRecord | undefined> {
    return jobWrites.claimJob(this.table, claim);
  }

  updateJob(job: JobRecord, changes: JobChanges): Promise<JobRecord> {
    return jobWrites.updateJob(this.table, job, changes);
  }

  renewLease(jobId: string, owner: string, until: number): Promise<boolean> {
    return jobWrites.renewLease(this.table, jobId, owner, until);
  }

  listStranded(before: number, limit?: number): Promise<StrandedItems> {
    return queries.listStranded(this.table, before, limit);
  }

  listJobs(query: JobListQuery): Promise<JobListPage> {
    return queries.listJobs(this.table, query);
  }

  findDeliveries(deliveryId: string): Promise<DeliveryRecord[]> {
    return queries.findDeliveries(this.table, deliveryId);
  }
}
