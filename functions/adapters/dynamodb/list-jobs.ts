/**
 * Jobs newest first through the jobs-by-time index: a day's jobs are spread over its shards (and, for jobs
 * written before sharding, the day's unsharded partition), so each day's partitions are queried and merged.
 * The cursor is the day and the sort key to go on below, which holds across every partition of that day.
 */
import { JOB_TABLE } from '../../config/table-contract';
import { type JobListQuery, listCursor, listLimit } from '../../ports/job-repository';
import { legacyListPartition, listPartitions } from './keys';
import { pages } from './paging';
import type { JobTableContext } from './table';

/** Queries one list call makes at most: every partition of every day of a 30-day retention. */
const MAX_LIST_QUERIES = (JOB_TABLE.listShards + 1) * 32;
const DAY_MS = 86_400_000;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

interface ListCursor {
  /** The UTC day (YYYY-MM-DD) the list goes on from. */
  d: string;
  /** The sort key to go on below within that day (absent: from the day's newest). */
  s?: string;
}

/** A cursor this list handed out; one from before sharding (`k`, an index key of the day) is read as its sort key. */
export function parseListCursor(value: unknown): ListCursor | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { d, s, k } = value as { d?: unknown; s?: unknown; k?: unknown };
  if (typeof d !== 'string' || !DAY.test(d)) return undefined;
  if (typeof s === 'string' && s.startsWith(d)) return { d, s };
  if (s !== undefined) return undefined;
  if (k === undefined) return { d };
  if (typeof k !== 'object' || k === null) return undefined;
  const { pk, listPk, listSk } = k as Record<string, unknown>;
  if (typeof pk !== 'string' || typeof listSk !== 'string' || listPk !== legacyListPartition(d))
    return undefined;
  return pk.startsWith('job#') && listSk.startsWith(d) ? { d, s: listSk } : undefined;
}

const previousDay = (day: string): string =>
  new Date(Date.parse(`${day}T00:00:00Z`) - DAY_MS).toISOString().slice(0, 10);

/** What one day's read found: index items newest first, complete down to `bound` when that is set. */
interface DayRead {
  items: Record<string, unknown>[];
  /**
   * Set when some partition was not read to its end: its unread items lie below this sort key (`null`: it
   * read none), so only the items at or above it may be listed before going on from it.
   */
  bound?: string | null;
}

/**
 * The keys of the jobs to list, newest first, and the cursor to go on. Reads `limit` + 1 matching index items
 * from each partition of a day at most (enough to know the day's newest `limit` and whether more follow).
 */
export async function listJobKeys(
  table: JobTableContext,
  query: JobListQuery,
): Promise<{ keys: string[]; cursor?: string }> {
  const limit = listLimit(query);
  const cursor = query.cursor === undefined ? undefined : listCursor.decode(query.cursor, parseListCursor);
  const oldest = new Date(table.now() - table.retentionSeconds * 1000).toISOString().slice(0, 10);
  const sinceDay = query.since?.slice(0, 10);
  const stopDay = sinceDay !== undefined && sinceDay > oldest ? sinceDay : oldest;
  const budget = { queries: MAX_LIST_QUERIES };
  const keys: string[] = [];
  let day = cursor?.d ?? new Date(table.now()).toISOString().slice(0, 10);
  let below = cursor?.s;
  // Bounded: a day at a time back to stopDay (at most the retention), all within the query budget.
  while (day >= stopDay) {
    const room = limit - keys.length;
    const { items, bound } = await readDay(table, query, day, below, room + 1, budget);
    const taken = items.slice(0, room);
    keys.push(...taken.map((item) => String(item.pk)));
    const last = taken.at(-1);
    if (items.length > room && last !== undefined) return done(keys, { d: day, s: String(last.listSk) });
    if (bound !== undefined) {
      // The query budget ran out within the day: go on from where a partition stopped.
      const s = bound ?? below;
      return done(keys, s === undefined ? { d: day } : { d: day, s });
    }
    day = previousDay(day);
    below = undefined;
    if (keys.length >= limit) return done(keys, day >= stopDay ? { d: day } : undefined);
  }
  return done(keys, undefined);
}

const done = (keys: string[], next: ListCursor | undefined): { keys: string[]; cursor?: string } => ({
  keys,
  ...(next === undefined ? {} : { cursor: listCursor.encode(next) }),
});

/**
 * Up to `want` matching index items of each partition of one day below `below`, merged newest first. The
 * partitions are read side by side, each within its share of the query budget; a partition stops at `want`
 * items, at its end, or when its share runs out.
 */
async function readDay(
  table: JobTableContext,
  query: JobListQuery,
  day: string,
  below: string | undefined,
  want: number,
  budget: { queries: number },
): Promise<DayRead> {
  if (query.since !== undefined && below !== undefined && query.since >= below) return { items: [] };
  const partitions = [...listPartitions(day), legacyListPartition(day)];
  const share = Math.floor(budget.queries / partitions.length);
  const reads = await Promise.all(
    partitions.map((partition) => readPartition(table, query, partition, below, want, share)),
  );
  budget.queries -= reads.reduce((sum, read) => sum + read.queries, 0);
  const items = reads.flatMap((read) => read.items);
  items.sort((a, b) => (String(a.listSk) < String(b.listSk) ? 1 : -1));
  const open = reads.filter((read) => read.frontier !== undefined);
  if (open.length === 0) return { items };
  // Some partition stopped early: what it has not read lies below its frontier (null: it read nothing).
  const bound = open.reduce<string | null>(
    (high, read) => (high === null || read.frontier === null ? null : maxOf(high, read.frontier as string)),
    open[0]?.frontier as string | null,
  );
  return { items: items.filter((item) => bound !== null && String(item.listSk) >= bound), bound };
}

/** Matching items of one partition; `frontier` is set when it was not read to its end. */
async function readPartition(
  table: JobTableContext,
  query: JobListQuery,
  partition: string,
  below: string | undefined,
  want: number,
  maxQueries: number,
): Promise<{ items: Record<string, unknown>[]; queries: number; frontier?: string | null }> {
  const items: Record<string, unknown>[] = [];
  let queries = 0;
  let frontier: string | null = below ?? null;
  const request = { query: dayQuery(table, query, partition, below, want) };
  for await (const page of pages(table.ddb, request, 'list jobs', maxQueries)) {
    queries += 1;
    // BETWEEN is inclusive: the item at `below` itself was listed already.
    items.push(...page.items.filter((item) => below === undefined || String(item.listSk) < below));
    if (page.lastKey === undefined) return { items, queries };
    frontier = String(page.lastKey.listSk);
    if (items.length >= want) break;
  }
  return { items, queries, frontier };
}

const maxOf = (a: string, b: string): string => (a > b ? a : b);

/** The Query of one partition: newest first, below `below` and from `since`, filtered on the projected fields. */
function dayQuery(
  table: JobTableContext,
  query: JobListQuery,
  partition: string,
  below: string | undefined,
  want: number,
) {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':p': partition };
  const filters: string[] = [];
  for (const field of ['integration', 'status'] as const) {
    if (query[field] === undefined) continue;
    filters.push(`#${field} = :${field}`);
    names[`#${field}`] = field;
    values[`:${field}`] = query[field];
  }
  let range = '';
  if (query.since !== undefined && below !== undefined) {
    // BETWEEN is inclusive: the item at `below` itself is dropped from the answer.
    range = ' AND listSk BETWEEN :since AND :below';
    values[':since'] = query.since;
    values[':below'] = below;
  } else if (query.since !== undefined) {
    range = ' AND listSk >= :since';
    values[':since'] = query.since;
  } else if (below !== undefined) {
    range = ' AND listSk < :below';
    values[':below'] = below;
  }
  return {
    TableName: table.tableName,
    IndexName: JOB_TABLE.jobsByTimeIndex,
    KeyConditionExpression: `listPk = :p${range}`,
    ...(filters.length === 0
      ? {}
      : { FilterExpression: filters.join(' AND '), ExpressionAttributeNames: names }),
    ExpressionAttributeValues: values,
    ScanIndexForward: false,
    Limit: want,
  };
}
