/**
 * The local table's start-up repair of deliveries a kill cut short: the ingest puts a delivery, closed, before
 * its jobs, so a kill between them leaves it without all its jobs (and its sender unanswered). Such a delivery
 * is opened again, due now, and the start-up reconciler completes its outbox (writes the missing jobs, sends).
 */
import {
  type AttributeValue,
  BatchGetItemCommand,
  type DynamoDBClient,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { jobKey, openShard } from '../../functions/adapters/dynamodb/keys';
import { inRounds } from '../../functions/adapters/dynamodb/paging';
import { JOB_TABLE } from '../../functions/config/table-contract';
import { ENQUEUE_GRACE_MS } from '../../functions/core/outbox';

/** Pages of the scan, and keys per BatchGetItem, at most. */
const MAX_SCAN_PAGES = 10_000;
const BATCH_GET_MAX = 100;

interface ClosedDelivery {
  readonly pk: string;
  readonly receivedAt: string;
  readonly jobIds: readonly string[];
}

/**
 * Reopens the deliveries a kill may have cut: only those received within ENQUEUE_GRACE_MS of the newest (an
 * ingest in flight at the kill is among them), and only when a planned job is missing. Returns how many.
 */
export async function reopenCutDeliveries(ddb: DynamoDBClient, table: string): Promise<number> {
  const closed = await closedDeliveries(ddb, table);
  const newest = Math.max(0, ...closed.map((d) => Date.parse(d.receivedAt)).filter(Number.isFinite));
  const recent = closed.filter((d) => Date.parse(d.receivedAt) >= newest - ENQUEUE_GRACE_MS);
  const existing = await existingKeys(
    ddb,
    table,
    recent.flatMap((d) => d.jobIds.map(jobKey)),
  );
  let reopened = 0;
  for (const delivery of recent) {
    if (delivery.jobIds.every((jobId) => existing.has(jobKey(jobId)))) continue;
    await ddb.send(
      new UpdateItemCommand({
        TableName: table,
        Key: { pk: { S: delivery.pk } },
        UpdateExpression: 'SET #open = :open, #lease = :due',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(enqueuedAt)',
        ExpressionAttributeNames: { '#open': JOB_TABLE.openPartitionKey, '#lease': JOB_TABLE.openSortKey },
        ExpressionAttributeValues: { ':open': { S: openShard(delivery.pk) }, ':due': { N: '0' } },
      }),
    );
    reopened += 1;
  }
  return reopened;
}

/** Every delivery recorded closed and not marked enqueued: what a cut ingest leaves. */
async function closedDeliveries(ddb: DynamoDBClient, table: string): Promise<ClosedDelivery[]> {
  const found: ClosedDelivery[] = [];
  let startKey: Record<string, AttributeValue> | undefined;
  for (let page = 0; page < MAX_SCAN_PAGES; page += 1) {
    const result = await ddb.send(
      new ScanCommand({
        TableName: table,
        FilterExpression:
          '#kind = :delivery AND attribute_not_exists(#open) AND attribute_not_exists(enqueuedAt)',
        ProjectionExpression: 'pk, receivedAt, jobs',
        ExpressionAttributeNames: { '#open': JOB_TABLE.openPartitionKey, '#kind': 'kind' },
        ExpressionAttributeValues: { ':delivery': { S: 'delivery' } },
        ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
      }),
    );
    for (const raw of result.Items ?? []) {
      const item = unmarshall(raw) as { pk: string; receivedAt?: string; jobs?: Array<{ jobId?: string }> };
      found.push({
        pk: item.pk,
        receivedAt: String(item.receivedAt),
        jobIds: (item.jobs ?? []).flatMap((job) => (typeof job.jobId === 'string' ? [job.jobId] : [])),
      });
    }
    startKey = result.LastEvaluatedKey;
    if (startKey === undefined) return found;
  }
  return found;
}

/** Those of the keys that exist (strongly consistent reads, 100 a request). */
async function existingKeys(
  ddb: DynamoDBClient,
  table: string,
  keys: readonly string[],
): Promise<Set<string>> {
  const existing = new Set<string>();
  for (let start = 0; start < keys.length; start += BATCH_GET_MAX) {
    const request = keys.slice(start, start + BATCH_GET_MAX).map((pk) => ({ pk: { S: pk } }));
    await inRounds(request, 'read the jobs of recent deliveries', async (left) => {
      const result = await ddb.send(
        new BatchGetItemCommand({
          RequestItems: { [table]: { Keys: left, ConsistentRead: true, ProjectionExpression: 'pk' } },
        }),
      );
      for (const item of result.Responses?.[table] ?? [])
        if (item.pk?.S !== undefined) existing.add(item.pk.S);
      return (result.UnprocessedKeys?.[table]?.Keys ?? []) as typeof left;
    });
  }
  return existing;
}
