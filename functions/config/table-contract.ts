/**
 * The job table's shape: the contract between the CDK construct that creates the table (lib/), the job store
 * that reads and writes it (functions/adapters/dynamodb/) and the local stack's emulated table. Constants only,
 * so lib/ can import it without pulling in runtime code.
 */

/** Key schema, index and TTL attribute of docrelay's DynamoDB job table. */
export const JOB_TABLE = {
  /** Partition key (S) of every item: `job#<jobId>` or `delivery#<integration>#<deliveryId>`. */
  partitionKey: 'pk',
  /**
   * Sparse GSI listing open deliveries and jobs by lease expiry, for the reconciler. It projects the keys only:
   * the reconciler reads each item it acts on from the table (sealed payloads stay out of the index).
   */
  openJobsIndex: 'open-jobs',
  /** What the open-jobs index projects. */
  openJobsProjection: 'KEYS_ONLY',
  /**
   * Hash key (S) of the open-jobs index: `open#<shard>` while an item is open, absent once it is final. Open
   * items are spread over `openShards` partitions (by a hash of `pk`), which the reconciler queries in turn.
   */
  openPartitionKey: 'openPk',
  /** How many partitions the open items are spread over. */
  openShards: 4,
  /** Range key (N) of the open-jobs index: epoch milliseconds by which the item should have moved on. */
  openSortKey: 'leaseUntil',
  /**
   * GSI listing jobs newest first (`GET /v1/jobs`, `docrelay jobs list`, the console): jobs spread over
   * `listShards` partitions per UTC day (`jobs#YYYY-MM-DD#<shard>`), sorted by `<receivedAt>#<jobId>`. It
   * projects only the keys and the filtered attributes, so a job's write touches it only when those change.
   */
  jobsByTimeIndex: 'jobs-by-time',
  /** Hash key (S) of the jobs-by-time index: `jobs#<UTC day of receivedAt>#<shard>` (`jobs#<day>` before sharding). */
  listPartitionKey: 'listPk',
  /** How many partitions a day's jobs are spread over, so no one partition takes every write of the day. */
  listShards: 4,
  /** Range key (S) of the jobs-by-time index: `<receivedAt>#<jobId>` (ISO time: sorts as time). */
  listSortKey: 'listSk',
  /** Non-key attributes the jobs-by-time index projects: what a list filters on. */
  jobsByTimeAttributes: ['integration', 'status', 'deliveryId'],
  /**
   * GSI finding a delivery by delivery id alone (`GET /v1/deliveries/{id}`): hash key `deliveryId`, which
   * deliveries carry (jobs keep theirs as `delivery` and are found through the delivery's record; jobs written
   * before still carry `deliveryId`). Keys only: written once, when the item is created.
   */
  byDeliveryIndex: 'by-delivery',
  /** Hash key (S) of the by-delivery index. */
  deliveryIdKey: 'deliveryId',
  /** Epoch seconds after which DynamoDB may delete the item (final jobs, old dedupe keys). */
  ttlAttribute: 'ttl',
} as const;
