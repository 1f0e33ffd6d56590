/**
 * Writes of deliveries, the outbox: a delivery recorded in plain conditional writes (content key, delivery, its
 * jobs), no transaction (it bills every item twice: docs/decisions.md); then its marks.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type DeliveryRecord, holdsEveryPlannedJob, type JobRecord, withoutCloser } from '../../core/job';
import type { CreateDeliveryResult } from '../../ports/job-repository';
import {
  contentFreeOrOwn,
  deliveryClosable,
  deliveryNotEnqueued,
  itemDoesNotExist,
  itemExists,
} from './conditions';
import { JobStoreError } from './errors';
import { putJobIfNew } from './job-writes';
import { contentItemKey, deliveryItem, deliveryKey, openShard, toDelivery, ttlOf } from './keys';
import { getItem, type JobTableContext } from './table';

/** Job puts in flight at once. */
const JOB_PUTS_AT_ONCE = 25;

/**
 * Records a delivery with its job records (and its content key), unless it was seen before: conditional puts
 * of the content key, then the delivery, then the jobs. A failure after the delivery's put throws, leaving
 * jobs unwritten, before any 2xx: the sender's retry, a duplicate, writes them (core/accept-delivery.ts).
 */
export async function createDelivery(
  table: JobTableContext,
  delivery: DeliveryRecord,
  jobs: readonly JobRecord[],
  contentKey?: string,
): Promise<CreateDeliveryResult> {
  if (contentKey !== undefined) {
    const holder = await claimContent(table, delivery, contentKey);
    if (holder !== delivery.deliveryId) return { created: false, duplicateOf: holder };
  }
  // Given every planned job, the delivery is recorded closed: each job's first-pickup lease covers its message.
  const closed = holdsEveryPlannedJob(delivery, jobs);
  try {
    await table.ddb.send(
      new PutCommand({
        TableName: table.tableName,
        Item: deliveryItem(delivery, table, !closed && delivery.enqueuedAt === undefined),
        ConditionExpression: itemDoesNotExist,
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException))
      throw new JobStoreError('record the delivery', error);
    return duplicateOf(table, delivery, error);
  }
  await putNewJobs(table, closed ? jobs.map(withoutCloser) : jobs);
  return { created: true };
}

/**
 * Claims the content key for the delivery (free, or its own already: a retry of it) and returns its holder:
 * the delivery itself, or the other delivery id that holds it.
 */
async function claimContent(
  table: JobTableContext,
  delivery: DeliveryRecord,
  contentKey: string,
): Promise<string> {
  const pk = contentItemKey(delivery.integration, contentKey);
  try {
    await table.ddb.send(
      new PutCommand({
        TableName: table.tableName,
        Item: {
          pk,
          kind: 'content',
          integration: delivery.integration,
          // Not `deliveryId`: that would put the key in the by-delivery index, a write for nothing.
          holder: delivery.deliveryId,
          ttl: ttlOf(table),
        },
        ConditionExpression: contentFreeOrOwn,
        ExpressionAttributeValues: { ':deliveryId': delivery.deliveryId },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return delivery.deliveryId;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException))
      throw new JobStoreError('claim a content key', error);
    // The old item comes with the failure on DynamoDB (wire format); an emulator may leave it out.
    const old = error.Item;
    const holder = old?.holder?.S ?? old?.deliveryId?.S ?? (await contentHolder(table, pk));
    // Held by nobody now: its TTL ran out between the put and the read; the sender's retry claims it.
    if (holder === undefined) throw new JobStoreError('claim a content key', error);
    return holder;
  }
}

/** The answer for a delivery found recorded: a duplicate of itself, with its record as it stands. */
async function duplicateOf(
  table: JobTableContext,
  delivery: DeliveryRecord,
  cause: unknown,
): Promise<CreateDeliveryResult> {
  const existing = await getDelivery(table, delivery.integration, delivery.deliveryId);
  if (existing === undefined) throw new JobStoreError('read the delivery it found', cause);
  return { created: false, duplicateOf: delivery.deliveryId, existing };
}

/** The delivery id holding a content key, if any does. */
async function contentHolder(table: JobTableContext, pk: string): Promise<string | undefined> {
  const item = await getItem(table, pk, 'read a content key');
  const holder = item?.holder ?? item?.deliveryId;
  return typeof holder === 'string' ? holder : undefined;
}

/**
 * Puts new job records, each only where no job is: a sender's retry completing this delivery (its duplicate)
 * may have written one already, and a worker may hold it; a blind put (BatchWriteItem) would reset it.
 */
async function putNewJobs(table: JobTableContext, jobs: readonly JobRecord[]): Promise<void> {
  for (let start = 0; start < jobs.length; start += JOB_PUTS_AT_ONCE) {
    await Promise.all(
      // A job found written was put by the duplicate that completes this delivery, which sends it too.
      jobs.slice(start, start + JOB_PUTS_AT_ONCE).map((job) => putJobIfNew(table, job, 'record jobs')),
    );
  }
}

/** The delivery with that id, if seen. */
export async function getDelivery(
  table: JobTableContext,
  integration: string,
  deliveryId: string,
): Promise<DeliveryRecord | undefined> {
  const item = await getItem(table, deliveryKey(integration, deliveryId), 'read a delivery');
  return item === undefined ? undefined : toDelivery(item);
}

/** One update of a delivery that must exist, with `:at` as its only value. */
export async function setOnDelivery(
  table: JobTableContext,
  integration: string,
  deliveryId: string,
  update: string,
  at: string,
  operation: string,
): Promise<void> {
  try {
    await table.ddb.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: deliveryKey(integration, deliveryId) },
        UpdateExpression: update,
        ConditionExpression: itemExists,
        ExpressionAttributeValues: { ':at': at },
      }),
    );
  } catch (error) {
    throw new JobStoreError(operation, error);
  }
}

/** Notes a failed send and opens the delivery for a grace from now, so the reconciler completes it if need be. */
export async function markSendFailed(
  table: JobTableContext,
  integration: string,
  deliveryId: string,
  at: string,
): Promise<void> {
  const pk = deliveryKey(integration, deliveryId);
  try {
    await table.ddb.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk },
        UpdateExpression: 'SET sendFailedAt = :at, openPk = :open, leaseUntil = :until',
        ConditionExpression: deliveryNotEnqueued,
        ExpressionAttributeValues: {
          ':at': at,
          ':open': openShard(pk),
          ':until': table.now() + table.enqueueGraceMs,
        },
      }),
    );
  } catch (error) {
    throw new JobStoreError('note the delivery unsent', error);
  }
}

/**
 * Closes the delivery on the first pickup of its last job, unless its send failed or it is closed already,
 * and returns it as written (the worker needs its payload next: one call instead of an update and a read).
 */
export async function closeDelivery(
  table: JobTableContext,
  integration: string,
  deliveryId: string,
  at: string,
): Promise<DeliveryRecord | undefined> {
  try {
    const result = await table.ddb.send(
      new UpdateCommand({
        TableName: table.tableName,
        Key: { pk: deliveryKey(integration, deliveryId) },
        UpdateExpression: 'SET enqueuedAt = :at REMOVE openPk, leaseUntil',
        ConditionExpression: deliveryClosable,
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
