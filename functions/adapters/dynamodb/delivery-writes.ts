/**
 * Writes of deliveries, the outbox: a delivery with its jobs (and its content key) in one transaction,
 * conditionally on being new, or in steps when it has more jobs than a transaction holds; then its marks.
 */
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
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
import { contentItemKey, deliveryItem, deliveryKey, jobItem, openShard, toDelivery, ttlOf } from './keys';
import { inRounds } from './paging';
import { getItem, type JobTableContext } from './table';

/** DynamoDB's limits per TransactWriteItems and BatchWriteItem request. */
const TRANSACT_WRITE_MAX = 100;
const BATCH_WRITE_MAX = 25;
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

/**
 * Records a delivery with its job records (and its content key), unless it was seen before: one
 * TransactWriteItems of conditional puts for the content key and the delivery and plain puts for the jobs,
 * or, past a transaction's size, in steps (content key, delivery, jobs in batches: core/outbox.ts).
 */
export async function createDelivery(
  table: JobTableContext,
  delivery: DeliveryRecord,
  jobs: readonly JobRecord[],
  contentKey?: string,
): Promise<CreateDeliveryResult> {
  const claim = contentKey === undefined ? undefined : contentClaim(table, delivery, contentKey);
  if ((claim === undefined ? 1 : 2) + jobs.length > TRANSACT_WRITE_MAX)
    return createDeliveryInSteps(table, delivery, jobs, claim);
  // With every planned job in the same transaction the delivery is born closed: nothing to close later.
  const atOnce = holdsEveryPlannedJob(delivery, jobs);
  try {
    await table.ddb.send(
      new TransactWriteCommand({
        TransactItems: [
          ...(claim === undefined ? [] : [{ Put: claim }]),
          { Put: deliveryPut(table, delivery, atOnce) },
          ...jobs.map((job) => ({
            Put: { TableName: table.tableName, Item: jobItem(atOnce ? withoutCloser(job) : job, table) },
          })),
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
      const old = first?.Item;
      const holder =
        old?.holder?.S ?? old?.deliveryId?.S ?? (await contentHolder(table, String(claim.Item.pk)));
      if (holder !== undefined && holder !== delivery.deliveryId)
        return { created: false, duplicateOf: holder };
    }
    const deliveryFailed = (claim === undefined ? first : second)?.Code === CONDITION_FAILED;
    if (deliveryFailed || claimFailed) return duplicateOf(table, delivery, error);
    // A concurrent attempt at the same delivery (TransactionConflict) or throttling: the sender retries.
    throw new JobStoreError('record the delivery', error);
  }
}

/** createDelivery for a delivery with more jobs than one transaction holds. */
async function createDeliveryInSteps(
  table: JobTableContext,
  delivery: DeliveryRecord,
  jobs: readonly JobRecord[],
  claim: ConditionalPut | undefined,
): Promise<CreateDeliveryResult> {
  if (claim !== undefined) {
    try {
      await table.ddb.send(new PutCommand(claim));
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException))
        throw new JobStoreError('claim a content key', error);
      const holder = await contentHolder(table, String(claim.Item.pk));
      if (holder !== undefined && holder !== delivery.deliveryId)
        return { created: false, duplicateOf: holder };
    }
  }
  try {
    await table.ddb.send(new PutCommand(deliveryPut(table, delivery)));
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException))
      throw new JobStoreError('record the delivery', error);
    return duplicateOf(table, delivery, error);
  }
  await writeNewJobs(table, jobs);
  return { created: true };
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

const deliveryPut = (
  table: JobTableContext,
  delivery: DeliveryRecord,
  withAllJobs = false,
): ConditionalPut => ({
  TableName: table.tableName,
  Item: deliveryItem(delivery, table, !withAllJobs && delivery.enqueuedAt === undefined),
  ConditionExpression: itemDoesNotExist,
});

/** The put of a content key for a delivery: free, or already its own (a retry of the same delivery). */
const contentClaim = (
  table: JobTableContext,
  delivery: DeliveryRecord,
  contentKey: string,
): ConditionalPut => ({
  TableName: table.tableName,
  Item: {
    pk: contentItemKey(delivery.integration, contentKey),
    kind: 'content',
    integration: delivery.integration,
    // Not `deliveryId`: that would put the key in the by-delivery index, a write for nothing.
    holder: delivery.deliveryId,
    ttl: ttlOf(table),
  },
  ConditionExpression: contentFreeOrOwn,
  ExpressionAttributeValues: { ':deliveryId': delivery.deliveryId },
  ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
});

/** The delivery id holding a content key, if any does. */
async function contentHolder(table: JobTableContext, pk: string): Promise<string | undefined> {
  const item = await getItem(table, pk, 'read a content key');
  const holder = item?.holder ?? item?.deliveryId;
  return typeof holder === 'string' ? holder : undefined;
}

/** Puts job records with BatchWriteItem, 25 a request, putting back what DynamoDB left unprocessed. */
async function writeNewJobs(table: JobTableContext, jobs: readonly JobRecord[]): Promise<void> {
  for (let start = 0; start < jobs.length; start += BATCH_WRITE_MAX) {
    const requests = jobs
      .slice(start, start + BATCH_WRITE_MAX)
      .map((job) => ({ PutRequest: { Item: jobItem(job, table) } }));
    await inRounds(requests, 'record jobs', async (left) => {
      const result = await table.ddb.send(
        new BatchWriteCommand({ RequestItems: { [table.tableName]: left as never } }),
      );
      return (result.UnprocessedItems?.[table.tableName] ?? []) as typeof left;
    });
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
