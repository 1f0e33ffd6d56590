/**
 * The job repository on DynamoDB: deliveries (the dedupe keys) and jobs, one item each, keyed by `pk`.
 *
 * A delivery is written first, conditionally, and is the outbox: it lists its jobs and holds the sealed
 * payload, and it sits in the open-jobs index until every job message was sent. Job records are then
 * written idempotently from it. A crash anywhere in between leaves an open delivery that the sender's retry
 * or the reconciler completes; no transaction is needed (and DynamoDB emulators lack them).
 *
 * Open items carry `openPk = "open#<shard>"` (a hash of `pk` picks one of JOB_TABLE.openShards) and
 * `leaseUntil` (epoch ms by which they should have moved on); the sparse index, which projects keys only,
 * lists them for the reconciler, one shard after another. Final jobs drop both and expire through the TTL.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandOutput,
  ScanCommand,
  type ScanCommandOutput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { JOB_TABLE } from '../../config/table-contract';
import { JobConflictError } from '../../core/errors';
import {
  applyChanges,
  type DeliveryRecord,
  isFinal,
  type JobChanges,
  type JobRecord,
  type JobStatus,
} from '../../core/job';
import type { CreateDeliveryResult, JobRepository, StrandedItems } from '../../ports/job-repository';
import { JobStoreError } from './errors';

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

/** The index partitions open items are written to, and the one items written before sharding carry. */
const OPEN_SHARDS = Array.from({ length: JOB_TABLE.openShards }, (_, i) => `open#${i}`);
const LEGACY_OPEN_PARTITION = 'open';

/** The open-index partition of an item: stable for its key, spread evenly (FNV-1a of `pk`). */
export function openShard(pk: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < pk.length; i += 1) {
    hash ^= pk.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return OPEN_SHARDS[hash % OPEN_SHARDS.length] as string;
}

const jobKey = (jobId: string): string => `job#${jobId}`;
const deliveryKey = (integration: string, deliveryId: string): string =>
  `delivery#${integration}#${deliveryId}`;
const contentItemKey = (integration: string, contentKey: string): string =>
  `content#${integration}#${contentKey}`;

/** Reads and writes deliveries and jobs. Every job update is conditional on the version it read. */
export class DynamoJobRepository implements JobRepository {
  private readonly retentionSeconds: number;
  private readonly enqueueGraceMs: number;
  private readonly now: () => number;

  constructor(
    private readonly ddb: DynamoDBDocumentClient,
    readonly tableName: string,
    options: JobStoreOptions = {},
  ) {
    this.retentionSeconds = (options.retentionDays ?? 30) * 86_400;
    this.enqueueGraceMs = options.enqueueGraceMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /**
   * Records a delivery, unless it was seen before (then nothing is written and the existing one is returned),
   * and writes its job records. Two concurrent calls for one delivery make one set of jobs.
   */
  async createDelivery(delivery: DeliveryRecord, jobs: readonly JobRecord[]): Promise<CreateDeliveryResult> {
    try {
      await this.ddb.send(
        new PutCommand({
          TableName: this.tableName,
          Item: this.deliveryItem(delivery),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException))
        throw new JobStoreError('record the delivery', error);
      const existing = await this.getDelivery(delivery.integration, delivery.deliveryId);
      if (existing === undefined) throw new JobStoreError('read the delivery it found', error);
      return { created: false, existing };
    }
    await this.ensureJobs(jobs);
    return { created: true };
  }

  /** Claims a content key (one conditional put), or reads which delivery holds it. */
  async claimContent(integration: string, contentKey: string, deliveryId: string): Promise<string> {
    const pk = contentItemKey(integration, contentKey);
    try {
      await this.ddb.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { pk, kind: 'content', integration, deliveryId, ttl: this.ttl() },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return deliveryId;
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException))
        throw new JobStoreError('claim a content key', error);
    }
    const holder = await this.get(pk, 'read a content key');
    return typeof holder?.deliveryId === 'string' ? holder.deliveryId : deliveryId;
  }

  /** Writes the job records that do not exist yet (idempotent: an existing job is left as it is). */
  async ensureJobs(jobs: readonly JobRecord[]): Promise<void> {
    await Promise.all(
      jobs.map(async (job) => {
        try {
          await this.ddb.send(
            new PutCommand({
              TableName: this.tableName,
              Item: this.jobItem(job),
              ConditionExpression: 'attribute_not_exists(pk)',
            }),
          );
        } catch (error) {
          if (!(error instanceof ConditionalCheckFailedException))
            throw new JobStoreError('record a job', error);
        }
      }),
    );
  }

  /** The delivery with that id, if seen. */
  async getDelivery(integration: string, deliveryId: string): Promise<DeliveryRecord | undefined> {
    const item = await this.get(deliveryKey(integration, deliveryId), 'read a delivery');
    return item === undefined ? undefined : toDelivery(item);
  }

  /** Notes that every job message of the delivery was sent, taking it out of the open index. */
  async markDeliveryEnqueued(integration: string, deliveryId: string, at: string): Promise<void> {
    try {
      await this.ddb.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: deliveryKey(integration, deliveryId) },
          UpdateExpression: 'SET enqueuedAt = :at REMOVE openPk, leaseUntil',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':at': at },
        }),
      );
    } catch (error) {
      throw new JobStoreError('mark the delivery enqueued', error);
    }
  }

  /** The job with that id (strongly consistent), if any. */
  async getJob(jobId: string): Promise<JobRecord | undefined> {
    const item = await this.get(jobKey(jobId), 'read a job');
    return item === undefined ? undefined : toJob(item);
  }

  /**
   * Writes `changes` to a job if nobody wrote it since `job` was read, and returns the new record.
   * `undefined` values remove attributes. Throws JobConflictError when the version moved on.
   */
  async updateJob(job: JobRecord, changes: JobChanges): Promise<JobRecord> {
    const next = applyChanges(job, changes, new Date(this.now()).toISOString());
    const before = this.jobItem(job);
    const after = this.jobItem(next);
    const names: Record<string, string> = { '#version': 'version' };
    const values: Record<string, unknown> = { ':expected': job.version };
    const sets: string[] = [];
    const removes: string[] = [];
    let i = 0;
    for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (name === 'pk') continue;
      if (after[name] === undefined && before[name] === undefined) continue;
      i += 1;
      names[`#a${i}`] = name;
      if (after[name] === undefined) {
        removes.push(`#a${i}`);
      } else {
        values[`:v${i}`] = after[name];
        sets.push(`#a${i} = :v${i}`);
      }
    }
    try {
      await this.ddb.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: jobKey(job.jobId) },
          UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
          ConditionExpression: '#version = :expected',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) throw new JobConflictError(job.jobId, error);
      throw new JobStoreError('update a job', error);
    }
    return next;
  }

  /**
   * Extends the lease of an open job its owner still holds, without touching its version (so the owner's own
   * checkpoint writes do not conflict with it). False when the job is final or another owner holds it.
   */
  async renewLease(jobId: string, owner: string, until: number): Promise<boolean> {
    try {
      await this.ddb.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: jobKey(jobId) },
          UpdateExpression: 'SET leaseUntil = :until',
          ConditionExpression: 'leaseOwner = :owner AND attribute_exists(openPk)',
          ExpressionAttributeValues: { ':until': until, ':owner': owner },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw new JobStoreError('renew a lease', error);
    }
  }

  /**
   * Open deliveries and jobs whose lease ran out before `before` (epoch ms), for the reconciler: each shard of
   * the open index in turn (and the partition of items written before sharding), then each item read whole
   * from the table (the index holds keys only; an item that closed meanwhile is left out).
   */
  async listStranded(before: number, limit = 100): Promise<StrandedItems> {
    const stranded: StrandedItems = { deliveries: [], jobs: [] };
    const keys: string[] = [];
    for (const partition of [...OPEN_SHARDS, LEGACY_OPEN_PARTITION]) {
      let startKey: Record<string, unknown> | undefined;
      // Bounded: at most `limit` items, a page at a time, at most 100 pages a shard.
      for (let page = 0; page < 100 && keys.length < limit; page += 1) {
        let result: QueryCommandOutput;
        try {
          result = await this.ddb.send(
            new QueryCommand({
              TableName: this.tableName,
              IndexName: OPEN_JOBS_INDEX,
              KeyConditionExpression: 'openPk = :open AND leaseUntil < :before',
              ExpressionAttributeValues: { ':open': partition, ':before': before },
              Limit: limit - keys.length,
              ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
            }),
          );
        } catch (error) {
          throw new JobStoreError('list open jobs', error);
        }
        for (const item of result.Items ?? []) keys.push(String(item.pk));
        startKey = result.LastEvaluatedKey;
        if (startKey === undefined) break;
      }
    }
    for (const pk of keys) {
      const item = await this.get(pk, 'read an open item');
      if (item === undefined || item.openPk === undefined) continue;
      if (item.kind === 'delivery') stranded.deliveries.push(toDelivery(item));
      else stranded.jobs.push(toJob(item));
    }
    return stranded;
  }

  /**
   * Failed jobs, by a scan of the table (bounded: at most `limit` jobs, 100 pages). For the local stack, whose
   * dead-letter queue lives in memory: at start-up it parks these again, so a restart loses no failure.
   */
  async listFailed(limit = 10_000): Promise<JobRecord[]> {
    const failed: JobRecord[] = [];
    let startKey: Record<string, unknown> | undefined;
    for (let page = 0; page < 100 && failed.length < limit; page += 1) {
      let result: ScanCommandOutput;
      try {
        result = await this.ddb.send(
          new ScanCommand({
            TableName: this.tableName,
            FilterExpression: '#kind = :job AND #status = :failed',
            ExpressionAttributeNames: { '#kind': 'kind', '#status': 'status' },
            ExpressionAttributeValues: { ':job': 'job', ':failed': 'failed' },
            ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
          }),
        );
      } catch (error) {
        throw new JobStoreError('list failed jobs', error);
      }
      for (const item of result.Items ?? []) if (failed.length < limit) failed.push(toJob(item));
      startKey = result.LastEvaluatedKey;
      if (startKey === undefined) break;
    }
    return failed;
  }

  /**
   * Jobs, newest first (the signature the JobRepository port's `listJobs` takes on the console branch).
   * FALLBACK, to be replaced by the console branch's index query: a bounded scan (at most 20 pages) sorted in
   * memory, no cursor. Fine for the local stack; on AWS a scan is what the index exists to avoid.
   */
  async listJobs(query: {
    integration?: string;
    status?: JobStatus;
    since?: string;
    deliveryId?: string;
    limit?: number;
    cursor?: string;
  }): Promise<{ jobs: JobRecord[]; cursor?: string }> {
    const jobs: JobRecord[] = [];
    let startKey: Record<string, unknown> | undefined;
    for (let page = 0; page < 20; page += 1) {
      let result: ScanCommandOutput;
      try {
        result = await this.ddb.send(
          new ScanCommand({
            TableName: this.tableName,
            FilterExpression: '#kind = :job',
            ExpressionAttributeNames: { '#kind': 'kind' },
            ExpressionAttributeValues: { ':job': 'job' },
            ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
          }),
        );
      } catch (error) {
        throw new JobStoreError('list jobs', error);
      }
      for (const item of result.Items ?? []) {
        const job = toJob(item);
        if (query.integration !== undefined && job.integration !== query.integration) continue;
        if (query.status !== undefined && job.status !== query.status) continue;
        if (query.deliveryId !== undefined && job.deliveryId !== query.deliveryId) continue;
        if (query.since !== undefined && job.receivedAt < query.since) continue;
        jobs.push(job);
      }
      startKey = result.LastEvaluatedKey;
      if (startKey === undefined) break;
    }
    jobs.sort((a, b) =>
      a.receivedAt === b.receivedAt
        ? b.jobId.localeCompare(a.jobId)
        : b.receivedAt.localeCompare(a.receivedAt),
    );
    return { jobs: jobs.slice(0, query.limit ?? 50) };
  }

  private async get(pk: string, operation: string): Promise<Record<string, unknown> | undefined> {
    try {
      const result = await this.ddb.send(
        new GetCommand({ TableName: this.tableName, Key: { pk }, ConsistentRead: true }),
      );
      return result.Item;
    } catch (error) {
      throw new JobStoreError(operation, error);
    }
  }

  private deliveryItem(delivery: DeliveryRecord): Record<string, unknown> {
    const open = delivery.enqueuedAt === undefined;
    const pk = deliveryKey(delivery.integration, delivery.deliveryId);
    return {
      ...delivery,
      pk,
      kind: 'delivery',
      openPk: open ? openShard(pk) : undefined,
      leaseUntil: open ? this.now() + this.enqueueGraceMs : undefined,
      ttl: this.ttl(),
    };
  }

  private jobItem(job: JobRecord): Record<string, unknown> {
    const open = !isFinal(job.status);
    const pk = jobKey(job.jobId);
    return {
      ...job,
      pk,
      kind: 'job',
      openPk: open ? openShard(pk) : undefined,
      leaseUntil: open ? (job.leaseUntil ?? this.now()) : undefined,
      ttl: open ? undefined : this.ttl(),
    };
  }

  private ttl(): number {
    return Math.floor(this.now() / 1000) + this.retentionSeconds;
  }
}

function toJob(item: Record<string, unknown>): JobRecord {
  const { pk: _pk, kind: _kind, openPk: _open, ttl: _ttl, ...job } = item;
  return job as unknown as JobRecord;
}

function toDelivery(item: Record<string, unknown>): DeliveryRecord {
  return {
    integration: String(item.integration),
    deliveryId: String(item.deliveryId),
    receivedAt: String(item.receivedAt),
    jobs: Array.isArray(item.jobs) ? (item.jobs as DeliveryRecord['jobs']) : [],
    ...(typeof item.enqueuedAt === 'string' ? { enqueuedAt: item.enqueuedAt } : {}),
    sealedPayload: typeof item.sealedPayload === 'string' ? item.sealedPayload : '',
  };
}
