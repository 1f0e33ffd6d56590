/**
 * Reads through the indexes: stranded items for the reconciler (the open index, shard by shard), jobs newest
 * first (./list-jobs.ts), and a delivery's items by delivery id. The indexes hold keys and a few attributes
 * only, so each item listed is read whole from the table.
 */
import { JOB_TABLE } from '../../config/table-contract';
import type { DeliveryRecord, JobRecord } from '../../core/job';
import {
  type JobListPage,
  type JobListQuery,
  listCursor,
  listLimit,
  listSortKey,
  matchesListQuery,
  type StrandedItems,
  stringFieldCursor,
} from '../../ports/job-repository';
import { jobKey, LEGACY_OPEN_PARTITION, OPEN_SHARDS, toDelivery, toJob } from './keys';
import { listJobKeys } from './list-jobs';
import { pages } from './paging';
import { getItem, type JobTableContext } from './table';

/** Query pages one index read takes at most (each up to 1 MB). */
const MAX_PAGES = 100;

/**
 * Open deliveries and jobs whose lease ran out before `before` (epoch ms), for the reconciler: each shard of
 * the open index in turn (and the partition of items written before sharding), then each item read whole
 * (an item that closed meanwhile is left out).
 */
export async function listStranded(
  table: JobTableContext,
  before: number,
  limit = 100,
): Promise<StrandedItems> {
  const keys: string[] = [];
  for (const partition of [...OPEN_SHARDS, LEGACY_OPEN_PARTITION]) {
    if (keys.length >= limit) break;
    const request = {
      query: {
        TableName: table.tableName,
        IndexName: JOB_TABLE.openJobsIndex,
        KeyConditionExpression: 'openPk = :open AND leaseUntil < :before',
        ExpressionAttributeValues: { ':open': partition, ':before': before },
        Limit: limit - keys.length,
      },
    };
    for await (const page of pages(table.ddb, request, 'list open jobs', MAX_PAGES)) {
      keys.push(...page.items.slice(0, limit - keys.length).map((item) => String(item.pk)));
      if (keys.length >= limit) break;
    }
  }
  const stranded: StrandedItems = { deliveries: [], jobs: [] };
  for (const pk of keys) {
    const item = await getItem(table, pk, 'read an open item');
    if (item === undefined || item.openPk === undefined) continue;
    if (item.kind === 'delivery') stranded.deliveries.push(toDelivery(item));
    else stranded.jobs.push(toJob(item));
  }
  return stranded;
}

/** Jobs newest first: by delivery id through the by-delivery index, else through the jobs-by-time index. */
export async function listJobs(table: JobTableContext, query: JobListQuery): Promise<JobListPage> {
  if (query.deliveryId !== undefined) return listDeliveryJobs(table, query, query.deliveryId);
  const { keys, cursor } = await listJobKeys(table, query);
  const jobs = await readJobs(table, keys);
  return {
    jobs: jobs.filter((job) => matchesListQuery(job, query)),
    ...(cursor === undefined ? {} : { cursor }),
  };
}

/** Every delivery with this id (one per integration that received it), newest first. */
export async function findDeliveries(table: JobTableContext, deliveryId: string): Promise<DeliveryRecord[]> {
  return readDeliveries(table, await keysOfDelivery(table, deliveryId));
}

/** The deliveries among these keys, read whole, newest first. */
async function readDeliveries(table: JobTableContext, keys: readonly string[]): Promise<DeliveryRecord[]> {
  const deliveries: DeliveryRecord[] = [];
  for (const pk of keys.filter((key) => key.startsWith('delivery#'))) {
    const item = await getItem(table, pk, 'read a delivery');
    if (item !== undefined) deliveries.push(toDelivery(item));
  }
  return deliveries.sort((a, b) => (a.receivedAt < b.receivedAt ? 1 : -1));
}

/**
 * The keys of the jobs of a delivery id: those its deliveries planned, and any job the by-delivery index holds
 * (jobs written before they left it).
 */
async function jobKeysOfDelivery(table: JobTableContext, deliveryId: string): Promise<string[]> {
  const keys = await keysOfDelivery(table, deliveryId);
  const planned = (await readDeliveries(table, keys)).flatMap((d) =>
    d.jobs.map(({ jobId }) => jobKey(jobId)),
  );
  return [...new Set([...planned, ...keys.filter((key) => key.startsWith('job#'))])];
}

/** The jobs of one delivery id (a handful), filtered and paged in memory by the list's sort key. */
async function listDeliveryJobs(
  table: JobTableContext,
  query: JobListQuery,
  deliveryId: string,
): Promise<JobListPage> {
  const limit = listLimit(query);
  const after =
    query.cursor === undefined ? undefined : listCursor.decode(query.cursor, stringFieldCursor('s'));
  const matching = (await readJobs(table, await jobKeysOfDelivery(table, deliveryId)))
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

/** Keys of the items carrying this delivery id (deliveries, and jobs written before), through by-delivery. */
async function keysOfDelivery(table: JobTableContext, deliveryId: string): Promise<string[]> {
  const request = {
    query: {
      TableName: table.tableName,
      IndexName: JOB_TABLE.byDeliveryIndex,
      KeyConditionExpression: '#deliveryId = :id',
      ExpressionAttributeNames: { '#deliveryId': JOB_TABLE.deliveryIdKey },
      ExpressionAttributeValues: { ':id': deliveryId },
    },
  };
  const keys: string[] = [];
  for await (const page of pages(table.ddb, request, 'find a delivery', MAX_PAGES)) {
    keys.push(...page.items.map((item) => String(item.pk)));
  }
  return keys;
}

/** Reads jobs whole, in the order of their keys; one deleted meanwhile is left out. */
async function readJobs(table: JobTableContext, keys: readonly string[]): Promise<JobRecord[]> {
  const items = await Promise.all(keys.map((pk) => getItem(table, pk, 'read a listed job')));
  return items.flatMap((item) => (item === undefined ? [] : [toJob(item)]));
}
