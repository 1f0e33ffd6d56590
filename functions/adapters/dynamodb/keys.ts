/**
 * The job table's key schema and item mappers: what a delivery, a job and a content key look like as items,
 * and which partition of each index they are written to.
 */
import { JOB_TABLE } from '../../config/table-contract';
import { type DeliveryRecord, isFinal, type JobRecord } from '../../core/job';
import { listSortKey } from '../../ports/job-repository';

/** The index partitions open items are written to, and the one items written before sharding carry. */
export const OPEN_SHARDS = Array.from({ length: JOB_TABLE.openShards }, (_, i) => `open#${i}`);
/** The open-index partition of items written before the open index was sharded. */
export const LEGACY_OPEN_PARTITION = 'open';

/** FNV-1a of a key: stable, and spreads keys evenly over the shards. */
function shardOf(pk: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < pk.length; i += 1) {
    hash ^= pk.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}

/** The open-index partition of an item: stable for its key, spread evenly. */
export const openShard = (pk: string): string => OPEN_SHARDS[shardOf(pk, OPEN_SHARDS.length)] as string;

/** The jobs-by-time partitions of one UTC day (YYYY-MM-DD), newest-first lists read them all. */
export const listPartitions = (day: string): string[] =>
  Array.from({ length: JOB_TABLE.listShards }, (_, i) => `jobs#${day}#${i}`);

/** The jobs-by-time partition of a day that items written before the listing was sharded carry. */
export const legacyListPartition = (day: string): string => `jobs#${day}`;

/** The jobs-by-time partition of a job: its UTC day of receipt and a shard picked by its key. */
export const listPartition = (pk: string, receivedAt: string): string =>
  `jobs#${receivedAt.slice(0, 10)}#${shardOf(pk, JOB_TABLE.listShards)}`;

/** Table key of a job. */
export const jobKey = (jobId: string): string => `job#${jobId}`;
/** Table key of a delivery (its dedupe key). */
export const deliveryKey = (integration: string, deliveryId: string): string =>
  `delivery#${integration}#${deliveryId}`;
/** Table key of a content key (the dedupe of the same content under another delivery id). */
export const contentItemKey = (integration: string, contentKey: string): string =>
  `content#${integration}#${contentKey}`;

/** What the item mappers need: the clock, and how long items are kept. */
export interface ItemClock {
  readonly now: () => number;
  readonly retentionSeconds: number;
  readonly enqueueGraceMs: number;
}

/** Epoch seconds after which the table may delete an item written now. */
export const ttlOf = (clock: ItemClock): number => Math.floor(clock.now() / 1000) + clock.retentionSeconds;

/** A delivery as an item, `open` (in the open index, leased for its grace) while its messages may not be out. */
export function deliveryItem(
  delivery: DeliveryRecord,
  clock: ItemClock,
  open = delivery.enqueuedAt === undefined,
): Record<string, unknown> {
  const pk = deliveryKey(delivery.integration, delivery.deliveryId);
  return {
    ...delivery,
    sealedPayload: packSeal(delivery.sealedPayload),
    pk,
    kind: 'delivery',
    openPk: open ? openShard(pk) : undefined,
    leaseUntil: open ? clock.now() + clock.enqueueGraceMs : undefined,
    ttl: ttlOf(clock),
  };
}

/**
 * A job as an item: open until final (then with a TTL), and in its jobs-by-time partition. Its delivery id is
 * kept as `delivery`, not `deliveryId`, which would put every job in the by-delivery index: a delivery's jobs
 * are found through the delivery's record instead (queries.ts).
 */
export function jobItem(job: JobRecord, clock: ItemClock): Record<string, unknown> {
  const open = !isFinal(job.status);
  const pk = jobKey(job.jobId);
  const { deliveryId, ...rest } = job;
  return {
    ...rest,
    delivery: deliveryId,
    pk,
    kind: 'job',
    openPk: open ? openShard(pk) : undefined,
    leaseUntil: open ? (job.leaseUntil ?? clock.now()) : undefined,
    ttl: open ? undefined : ttlOf(clock),
    listPk: listPartition(pk, job.receivedAt),
    listSk: listSortKey(job),
  };
}

/** A job item back as its record, without the table's attributes (`deliveryId` on items written before). */
export function toJob(item: Record<string, unknown>): JobRecord {
  const {
    pk: _pk,
    kind: _kind,
    openPk: _open,
    ttl: _ttl,
    listPk: _listPk,
    listSk: _listSk,
    delivery,
    ...job
  } = item;
  return { ...job, deliveryId: String(delivery ?? job.deliveryId) } as unknown as JobRecord;
}

/** A delivery item back as its record, with safe defaults for a damaged one. */
export function toDelivery(item: Record<string, unknown>): DeliveryRecord {
  return {
    integration: String(item.integration),
    deliveryId: String(item.deliveryId),
    receivedAt: String(item.receivedAt),
    jobs: Array.isArray(item.jobs) ? (item.jobs as DeliveryRecord['jobs']) : [],
    ...(typeof item.enqueuedAt === 'string' ? { enqueuedAt: item.enqueuedAt } : {}),
    ...(typeof item.sendFailedAt === 'string' ? { sendFailedAt: item.sendFailedAt } : {}),
    sealedPayload: unpackSeal(item.sealedPayload),
  };
}

/** A seal's head (`<version>.<iv>.<tag>`, base64url parts) and body, as in commons/seal.ts. */
const SEAL = /^([\w-]+\.[\w-]+\.[\w-]+)\.([\w-]*)$/;
/** The dot (0x2e) that ends a packed seal's head. */
const DOT = 0x2e;

/**
 * A seal as the table keeps it: the head as text, then the body's bytes (Binary), a quarter smaller than its
 * base64url text, which is what a delivery's write units are billed on. Anything else is kept as it is.
 */
export function packSeal(sealed: string): Uint8Array | string {
  const parts = SEAL.exec(sealed);
  if (parts === null) return sealed;
  const body = Buffer.from(parts[2] as string, 'base64url');
  if (body.toString('base64url') !== parts[2]) return sealed;
  return Buffer.concat([Buffer.from(`${parts[1]}.`, 'latin1'), body]);
}

/** A seal back from the table: packed (packSeal), or text as items written before packing hold it. */
export function unpackSeal(stored: unknown): string {
  if (typeof stored === 'string') return stored;
  if (!(stored instanceof Uint8Array)) return '';
  const bytes = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  let end = -1;
  for (let dots = 0; dots < 3; dots += 1) {
    end = bytes.indexOf(DOT, end + 1);
    if (end < 0) return '';
  }
  return `${bytes.subarray(0, end).toString('latin1')}.${bytes.subarray(end + 1).toString('base64url')}`;
}
