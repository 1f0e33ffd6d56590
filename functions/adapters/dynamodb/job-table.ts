/**
 * The job repository on DynamoDB: deliveries (the dedupe keys) and jobs, one item each, keyed by `pk`.
 *
 * A delivery is the outbox: it lists its jobs and holds the sealed payload, and it sits in the open-jobs index
 * until its messages went out. It is written with its job records (and its content key) in one transaction,
 * conditionally on being new; a crash after it leaves an open delivery that the sender's retry or the
 * reconciler sends, and job records missing (a delivery written in steps) are written idempotently from it.
 *
 * Open items carry `openPk = "open#<shard>"` (a hash of `pk` picks one of JOB_TABLE.openShards) and
 * `leaseUntil` (epoch ms by which they should have moved on); the sparse index, which projects keys only,
 * lists them for the reconciler, one shard after another. Final jobs drop both and expire through the TTL.
 *
 * Jobs also carry `listPk = "jobs#<UTC day received>"` and `listSk = "<receivedAt>#<jobId>"`: the jobs-by-time
 * index lists them newest first, a day at a time (never a scan). The by-delivery index, keyed on the
 * `deliveryId` both items carry, finds a delivery and its jobs by delivery id alone.
 */
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandOutput,
  ScanCommand,
  type ScanCommandOutput,
  TransactWriteCommand,
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
  awaitsFirstPickup as untouched,
} from '../../core/job';
import { ENQUEUE_GRACE_MS } from '../../core/outbox';
import {
  type CreateDeliveryResult,
  type EnsuredJobs,
  type JobClaim,
  type JobListPage,
  type JobListQuery,
  type JobRepository,
  listCursor,
  listLimit,
  listSortKey,
  matchesListQuery,
  type StrandedItems,
} from '../../ports/job-repository';
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

/** Query pages one listJobs call reads at most (each up to 1 MB): every day of a 30-day retention and more. */
const MAX_LIST_PAGES = 60;
const DAY_MS = 86_400_000;
const listPartition = (day: string): string => `jobs#${day}`;

interface ListCursor {
  /** The UTC day (YYYY-MM-DD) the list goes on from. */
  d: string;
  /** The index key to start after within that day (absent: from the day's newest). */
  k?: { pk: string; listPk: string; listSk: string };
}

function parseListCursor(value: unknown): ListCursor | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { d, k } = value as { d?: unknown; k?: unknown };
  if (typeof d !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(d)) return undefined;
  if (k === undefined) return { d };
  if (typeof k !== 'object' || k === null) return undefined;
  const { pk, listPk, listSk } = k as Record<string, unknown>;
  if (typeof pk !== 'string' || typeof listPk !== 'string' || typeof listSk !== 'string') return undefined;
  if (listPk !== listPartition(d) || !pk.startsWith('job#')) return undefined;
  return { d, k: { pk, listPk, listSk } };
}

const previousDay = (day: string): string =>
  new Date(Date.parse(`${day}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);

/** The jobs-by-time index key of an item (what ExclusiveStartKey takes). */
const indexKey = (item: Record<string, unknown>): Required<ListCursor>['k'] => ({
  pk: String(item.pk),
  listPk: String(item.listPk),
  listSk: String(item.listSk),
});

const jobKey = (jobId: string): string => `job#${jobId}`;

/** DynamoDB's limits per TransactWriteItems, BatchWriteItem and BatchGetItem request. */
const TRANSACT_WRITE_MAX = 100;
const BATCH_WRITE_MAX = 25;
const BATCH_GET_MAX = 100;
/** Requests per batch before unprocessed items count as a failure, and the first backoff between them. */
const BATCH_ROUNDS = 5;
const BATCH_BACKOFF_MS = 25;
const delay = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

interface JobState {
  status: JobStatus;
  version: number;
}

/** Those of `jobIds` that exist and wait for their first pickup. */
const waitingOf = (jobIds: readonly string[], states: ReadonlyMap<string, JobState>): string[] =>
  jobIds.filter((jobId) => {
    const state = states.get(jobId);
    return state !== undefined && untouched(state);
  });

/**
 * Runs one batch request and then again with what DynamoDB left unprocessed (throttling), backing off, at most
 * BATCH_ROUNDS times; what is still left after that, or any error, is a JobStoreError for `operation`.
 */
async function inRounds<T>(items: T[], operation: string, send: (items: T[]) => Promise<T[]>): Promise<void> {
  let left = items;
  for (let round = 0; left.length > 0; round += 1) {
    if (round === BATCH_ROUNDS) throw new JobStoreError(operation, new Error('items left unprocessed'));
    if (round > 0) await delay(BATCH_BACKOFF_MS * 2 ** round);
    try {
      left = await send(left);
    } catch (error) {
      throw new JobStoreError(operation, error);
    }
  }
}

/** A cancellation reason's code for an item whose condition did not hold. */
const CONDITION_FAILED = 'ConditionalCheckFailed';

/** A put with its condition, alone (PutItem) or in a transaction. */
interface ConditionalPut {
  TableName: string;
  Item: Record<string, unknown>;
  ConditionExpression: string;
  ExpressionAttributeValues?: Record<string, unknown>;
  ReturnValuesOnConditionCheckFailure?: 'ALL_OLD';
}

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
    this.enqueueGraceMs = options.enqueueGraceMs ?? ENQUEUE_GRACE_MS;
    this.now = options.now ?? Date.now;
  }

  /**
   * Records a delivery with its job records (and its content key), unless it was seen before: one
   * TransactWriteItems, all or nothing, of conditional puts for the content key and the delivery and plain
   * puts for the jobs. A delivery with more jobs than a transaction holds is written in steps instead (content
   * key, delivery, then the jobs in batches); within its grace nobody else writes those (core/outbox.ts).
   */
  async createDelivery(
    delivery: DeliveryRecord,
    jobs: readonly JobRecord[],
    contentKey?: string,
  ): Promise<CreateDeliveryResult> {
    const claim = contentKey === undefined ? undefined : this.contentClaim(delivery, contentKey);
    if ((claim === undefined ? 1 : 2) + jobs.length > TRANSACT_WRITE_MAX)
      return this.createDeliveryInSteps(delivery, jobs, claim);
    try {
      await this.ddb.send(
        new TransactWriteCommand({
          TransactItems: [
            ...(claim === undefined ? [] : [{ Put: claim }]),
            { Put: this.deliveryPut(delivery) },
            ...jobs.map((job) => ({ Put: { TableName: this.tableName, Item: this.jobItem(job) } })),
          ],
        }),
      );
      return { created: true };
    } catch (error) {
      if (!(error instanceof TransactionCanceledException))
        throw new JobStoreError('record the delivery', error);
      const [first, second] = error.CancellationReasons ?? [];
      const claimFailed = claim !== undefined && first?.Code === CONDITION_FAILED;
      if (claimFailed) {
        const holder = first?.Item?.deliveryId?.S ?? (await this.contentHolder(String(claim.Item.pk)));
        if (holder !== undefined && holder !== delivery.deliveryId)
          return { created: false, duplicateOf: holder };
      }
      const deliveryFailed = (claim === undefined ? first : second)?.Code === CONDITION_FAILED;
      if (deliveryFailed || claimFailed) return this.duplicateOf(delivery, error);
      // A concurrent attempt at the same delivery (TransactionConflict) or throttling: the sender retries.
      throw new JobStoreError('record the delivery', error);
    }
  }

  /** createDelivery for a delivery with more jobs than one transaction holds. */
  private async createDeliveryInSteps(
    delivery: DeliveryRecord,
    jobs: readonly JobRecord[],
    claim: ConditionalPut | undefined,
  ): Promise<CreateDeliveryResult> {
    if (claim !== undefined) {
      try {
        await this.ddb.send(new PutCommand(claim));
      } catch (error) {
        if (!(error instanceof ConditionalCheckFailedException))
          throw new JobStoreError('claim a content key', error);
        const holder = await this.contentHolder(String(claim.Item.pk));
        if (holder !== undefined && holder !== delivery.deliveryId)
          return { created: false, duplicateOf: holder };
      }
    }
    try {
      await this.ddb.send(new PutCommand(this.deliveryPut(delivery)));
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException))
        throw new JobStoreError('record the delivery', error);
      return this.duplicateOf(delivery, error);
    }
    await this.writeNewJobs(jobs);
    return { created: true };
  }

  /** The answer for a delivery found recorded: a duplicate of itself, with its record as it stands. */
  private async duplicateOf(delivery: DeliveryRecord, cause: unknown): Promise<CreateDeliveryResult> {
    const existing = await this.getDelivery(delivery.integration, delivery.deliveryId);
    if (existing === undefined) throw new JobStoreError('read the delivery it found', cause);
    return { created: false, duplicateOf: delivery.deliveryId, existing };
  }

  /** The conditional put of a new delivery. */
  private deliveryPut(delivery: DeliveryRecord): ConditionalPut {
    return {
      TableName: this.tableName,
      Item: this.deliveryItem(delivery),
      ConditionExpression: 'attribute_not_exists(pk)',
    };
  }

  /** The put of a content key for a delivery: free, or already its own (a retry of the same delivery). */
  private contentClaim(delivery: DeliveryRecord, contentKey: string): ConditionalPut {
    return {
      TableName: this.tableName,
      Item: {
        pk: contentItemKey(delivery.integration, contentKey),
        kind: 'content',
        integration: delivery.integration,
        deliveryId: delivery.deliveryId,
        ttl: this.ttl(),
      },
      ConditionExpression: 'attribute_not_exists(pk) OR deliveryId = :deliveryId',
      ExpressionAttributeValues: { ':deliveryId': delivery.deliveryId },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    };
  }

  /** The delivery id holding a content key, if any does. */
  private async contentHolder(pk: string): Promise<string | undefined> {
    const holder = await this.get(pk, 'read a content key');
    return typeof holder?.deliveryId === 'string' ? holder.deliveryId : undefined;
  }

  /**
   * Puts job records with BatchWriteItem, 25 a request, putting back what DynamoDB left unprocessed (throttling)
   * a bounded number of times.
   */
  private async writeNewJobs(jobs: readonly JobRecord[]): Promise<void> {
    for (let start = 0; start < jobs.length; start += BATCH_WRITE_MAX) {
      const requests = jobs
        .slice(start, start + BATCH_WRITE_MAX)
        .map((job) => ({ PutRequest: { Item: this.jobItem(job) } }));
      await inRounds(requests, 'record jobs', async (left) => {
        const result = await this.ddb.send(
          new BatchWriteCommand({ RequestItems: { [this.tableName]: left as never } }),
        );
        return (result.UnprocessedItems?.[this.tableName] ?? []) as typeof left;
      });
    }
  }

  /**
   * Writes the job records that do not exist yet (an existing job is left as it is): one batch read, then a
   * conditional put per missing job. Returns the ids it wrote and those of existing jobs no worker touched.
   */
  async ensureJobs(jobs: readonly JobRecord[]): Promise<EnsuredJobs> {
    const states = await this.jobStates(jobs.map((job) => job.jobId));
    const created = new Set<string>();
    await Promise.all(
      jobs.map(async (job) => {
        if (states.has(job.jobId)) return;
        try {
          await this.ddb.send(
            new PutCommand({
              TableName: this.tableName,
              Item: this.jobItem(job),
              ConditionExpression: 'attribute_not_exists(pk)',
            }),
          );
          created.add(job.jobId);
        } catch (error) {
          // Written meanwhile by another caller, who sends it.
          if (!(error instanceof ConditionalCheckFailedException))
            throw new JobStoreError('record a job', error);
        }
      }),
    );
    return {
      created: jobs.map((job) => job.jobId).filter((jobId) => created.has(jobId)),
      untouched: waitingOf(
        jobs.map((job) => job.jobId),
        states,
      ),
    };
  }

  /** The ids, of those given, of jobs that exist and wait for their first pickup (one batch read). */
  async waitingJobs(jobIds: readonly string[]): Promise<string[]> {
    return waitingOf(jobIds, await this.jobStates(jobIds));
  }

  /** Status and version of the jobs that exist, by job id: BatchGetItem, strongly consistent. */
  private async jobStates(jobIds: readonly string[]): Promise<Map<string, JobState>> {
    const states = new Map<string, JobState>();
    const unique = [...new Set(jobIds)];
    for (let start = 0; start < unique.length; start += BATCH_GET_MAX) {
      const keys = unique.slice(start, start + BATCH_GET_MAX).map((jobId) => ({ pk: jobKey(jobId) }));
      await inRounds(keys, 'read jobs', async (left) => {
        const result = await this.ddb.send(
          new BatchGetCommand({
            RequestItems: {
              [this.tableName]: {
                Keys: left,
                ConsistentRead: true,
                ProjectionExpression: 'jobId, #status, version',
                ExpressionAttributeNames: { '#status': 'status' },
              },
            },
          }),
        );
        for (const item of result.Responses?.[this.tableName] ?? []) {
          states.set(String(item.jobId), { status: item.status as JobStatus, version: Number(item.version) });
        }
        return (result.UnprocessedKeys?.[this.tableName]?.Keys ?? []) as typeof left;
      });
    }
    return states;
  }

  /** The delivery with that id, if seen. */
  async getDelivery(integration: string, deliveryId: string): Promise<DeliveryRecord | undefined> {
    const item = await this.get(deliveryKey(integration, deliveryId), 'read a delivery');
    return item === undefined ? undefined : toDelivery(item);
  }

  /** Notes that the delivery's messages could not be sent: a duplicate within its grace sends them. */
  async markDeliverySendFailed(integration: string, deliveryId: string, at: string): Promise<void> {
    await this.setOnDelivery(
      integration,
      deliveryId,
      'SET sendFailedAt = :at',
      at,
      'note the delivery unsent',
    );
  }

  /** Notes that every job message of the delivery was sent, taking it out of the open index. */
  async markDeliveryEnqueued(integration: string, deliveryId: string, at: string): Promise<void> {
    await this.setOnDelivery(
      integration,
      deliveryId,
      'SET enqueuedAt = :at REMOVE openPk, leaseUntil',
      at,
      'mark the delivery enqueued',
    );
  }

  /**
   * Closes the delivery on the first pickup of its last job, unless its send failed or it is closed already,
   * and returns it as written (the worker needs its payload next: one call instead of an update and a read).
   */
  async closeDelivery(
    integration: string,
    deliveryId: string,
    at: string,
  ): Promise<DeliveryRecord | undefined> {
    try {
      const result = await this.ddb.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: deliveryKey(integration, deliveryId) },
          UpdateExpression: 'SET enqueuedAt = :at REMOVE openPk, leaseUntil',
          ConditionExpression: 'attribute_exists(openPk) AND attribute_not_exists(sendFailedAt)',
          ExpressionAttributeValues: { ':at': at },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return result.Attributes === undefined ? undefined : toDelivery(result.Attributes);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw new JobStoreError('close the delivery', error);
    }
  }

  /** One update of a delivery that must exist, with `:at` as its only value. */
  private async setOnDelivery(
    integration: string,
    deliveryId: string,
    update: string,
    at: string,
    operation: string,
  ): Promise<void> {
    try {
      await this.ddb.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: deliveryKey(integration, deliveryId) },
          UpdateExpression: update,
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':at': at },
        }),
      );
    } catch (error) {
      throw new JobStoreError(operation, error);
    }
  }

  /** The job with that id (strongly consistent), if any. */
  async getJob(jobId: string): Promise<JobRecord | undefined> {
    const item = await this.get(jobKey(jobId), 'read a job');
    return item === undefined ? undefined : toJob(item);
  }

  /**
   * The claim as one conditional update returning the job (ALL_NEW), on the claim's conditions (see the
   * port); its writes are those `transitions.claim` makes from `queued` or `processing`, with the version
   * bumped. An unmet condition (or no such job) is undefined.
   */
  async claimJob(claim: JobClaim): Promise<JobRecord | undefined> {
    try {
      const result = await this.ddb.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: jobKey(claim.jobId) },
          UpdateExpression:
            'SET #status = :processing, attempts = attempts + :one, leaseOwner = :owner, leaseUntil = :until, ' +
            '#version = #version + :one, updatedAt = :at',
          ConditionExpression:
            '#status IN (:queued, :processing) AND attempts < :max AND (attribute_not_exists(leaseOwner) OR ' +
            'leaseOwner = :owner OR attribute_not_exists(leaseUntil) OR leaseUntil <= :now)',
          ExpressionAttributeNames: { '#status': 'status', '#version': 'version' },
          ExpressionAttributeValues: {
            ':queued': 'queued',
            ':processing': 'processing',
            ':one': 1,
            ':owner': claim.owner,
            ':until': claim.leaseUntil,
            ':at': new Date(this.now()).toISOString(),
            ':max': claim.maxAttempts,
            ':now': claim.nowMs,
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return result.Attributes === undefined ? undefined : toJob(result.Attributes);
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return undefined;
      throw new JobStoreError('claim a job', error);
    }
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
   * Jobs newest first: by delivery id through the by-delivery index, else through the jobs-by-time index,
   * one day's partition after another from today (or the cursor's day) back to `since` or the retention
   * period, filtering on the projected integration and status. Bounded by MAX_LIST_PAGES queries: a page
   * may then hold fewer jobs than asked, with a cursor to go on. Each job is read whole from the table.
   */
  async listJobs(query: JobListQuery): Promise<JobListPage> {
    if (query.deliveryId !== undefined) return this.listDeliveryJobs(query);
    const limit = listLimit(query);
    const cursor = query.cursor === undefined ? undefined : listCursor.decode(query.cursor, parseListCursor);
    const today = new Date(this.now()).toISOString().slice(0, 10);
    const oldest = new Date(this.now() - this.retentionSeconds * 1000).toISOString().slice(0, 10);
    const sinceDay = query.since?.slice(0, 10);
    const stopDay = sinceDay !== undefined && sinceDay > oldest ? sinceDay : oldest;
    const filters: string[] = [];
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    if (query.integration !== undefined) {
      filters.push('#integration = :integration');
      names['#integration'] = 'integration';
      values[':integration'] = query.integration;
    }
    if (query.status !== undefined) {
      filters.push('#status = :status');
      names['#status'] = 'status';
      values[':status'] = query.status;
    }
    const keys: string[] = [];
    let day = cursor?.d ?? today;
    let startKey: Record<string, unknown> | undefined = cursor?.k;
    let pages = 0;
    let next: ListCursor | undefined;
    while (day >= stopDay) {
      if (pages >= MAX_LIST_PAGES) {
        next = { d: day, ...(startKey === undefined ? {} : { k: indexKey(startKey) }) };
        break;
      }
      pages += 1;
      let result: QueryCommandOutput;
      try {
        result = await this.ddb.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: JOB_TABLE.jobsByTimeIndex,
            KeyConditionExpression:
              query.since === undefined ? 'listPk = :day' : 'listPk = :day AND listSk >= :since',
            ...(filters.length === 0
              ? {}
              : { FilterExpression: filters.join(' AND '), ExpressionAttributeNames: names }),
            ExpressionAttributeValues: {
              ...values,
              ':day': listPartition(day),
              ...(query.since === undefined ? {} : { ':since': query.since }),
            },
            ScanIndexForward: false,
            Limit: limit - keys.length + 1,
            ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
          }),
        );
      } catch (error) {
        throw new JobStoreError('list jobs', error);
      }
      const items = result.Items ?? [];
      // One more than there is room for tells whether the day goes on; the cursor starts after the last kept.
      const room = limit - keys.length;
      for (const item of items.slice(0, room)) keys.push(String(item.pk));
      if (items.length > room) {
        next = { d: day, k: indexKey(items[room - 1] as Record<string, unknown>) };
        break;
      }
      startKey = result.LastEvaluatedKey;
      if (startKey === undefined) day = previousDay(day);
      if (keys.length >= limit) {
        if (startKey !== undefined) next = { d: day, k: indexKey(startKey) };
        else if (day >= stopDay) next = { d: day };
        break;
      }
    }
    const jobs = await this.readJobs(keys);
    return {
      jobs: jobs.filter((job) => matchesListQuery(job, { ...query, deliveryId: undefined })),
      ...(next === undefined ? {} : { cursor: listCursor.encode(next) }),
    };
  }

  /** Every delivery with this id (one per integration that received it), newest first. */
  async findDeliveries(deliveryId: string): Promise<DeliveryRecord[]> {
    const keys = await this.keysOfDelivery(deliveryId);
    const deliveries: DeliveryRecord[] = [];
    for (const pk of keys.filter((key) => key.startsWith('delivery#'))) {
      const item = await this.get(pk, 'read a delivery');
      if (item !== undefined) deliveries.push(toDelivery(item));
    }
    return deliveries.sort((a, b) => (a.receivedAt < b.receivedAt ? 1 : -1));
  }

  /** The jobs of one delivery id (a handful), filtered and paged in memory by the same sort key. */
  private async listDeliveryJobs(query: JobListQuery): Promise<JobListPage> {
    const limit = listLimit(query);
    const after =
      query.cursor === undefined
        ? undefined
        : listCursor.decode(query.cursor, (value) =>
            typeof value === 'object' && value !== null && typeof (value as { s?: unknown }).s === 'string'
              ? (value as { s: string }).s
              : undefined,
          );
    const keys = await this.keysOfDelivery(query.deliveryId as string);
    const matching = (await this.readJobs(keys.filter((key) => key.startsWith('job#'))))
      .filter((job) => matchesListQuery(job, query) && (after === undefined || listSortKey(job) < after))
      .sort((a, b) => (listSortKey(a) < listSortKey(b) ? 1 : -1));
    const page = matching.slice(0, limit);
    const last = page.at(-1);
    return {
      jobs: page,
      ...(matching.length > limit && last !== undefined
        ? { cursor: listCursor.encode({ s: listSortKey(last) }) }
        : {}),
    };
  }

  /** Keys of the items (deliveries and jobs) carrying this delivery id, through the by-delivery index. */
  private async keysOfDelivery(deliveryId: string): Promise<string[]> {
    const keys: string[] = [];
    let startKey: Record<string, unknown> | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
      let result: QueryCommandOutput;
      try {
        result = await this.ddb.send(
          new QueryCommand({
            TableName: this.tableName,
            IndexName: JOB_TABLE.byDeliveryIndex,
            KeyConditionExpression: '#deliveryId = :id',
            ExpressionAttributeNames: { '#deliveryId': JOB_TABLE.deliveryIdKey },
            ExpressionAttributeValues: { ':id': deliveryId },
            ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
          }),
        );
      } catch (error) {
        throw new JobStoreError('find a delivery', error);
      }
      for (const item of result.Items ?? []) keys.push(String(item.pk));
      startKey = result.LastEvaluatedKey;
      if (startKey === undefined) break;
    }
    return keys;
  }

  /** Reads jobs whole, in the order of their keys; one deleted meanwhile is left out. */
  private async readJobs(keys: readonly string[]): Promise<JobRecord[]> {
    const items = await Promise.all(keys.map((pk) => this.get(pk, 'read a listed job')));
    return items.flatMap((item) => (item === undefined ? [] : [toJob(item)]));
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
      listPk: listPartition(job.receivedAt.slice(0, 10)),
      listSk: listSortKey(job),
    };
  }

  private ttl(): number {
    return Math.floor(this.now() / 1000) + this.retentionSeconds;
  }
}

function toJob(item: Record<string, unknown>): JobRecord {
  const { pk: _pk, kind: _kind, openPk: _open, ttl: _ttl, listPk: _listPk, listSk: _listSk, ...job } = item;
  return job as unknown as JobRecord;
}

function toDelivery(item: Record<string, unknown>): DeliveryRecord {
  return {
    integration: String(item.integration),
    deliveryId: String(item.deliveryId),
    receivedAt: String(item.receivedAt),
    jobs: Array.isArray(item.jobs) ? (item.jobs as DeliveryRecord['jobs']) : [],
    ...(typeof item.enqueuedAt === 'string' ? { enqueuedAt: item.enqueuedAt } : {}),
    ...(typeof item.sendFailedAt === 'string' ? { sendFailedAt: item.sendFailedAt } : {}),
    sealedPayload: typeof item.sealedPayload === 'string' ? item.sealedPayload : '',
  };
}
