/**
 * The job table's shape: the contract between the CDK construct that creates the table (lib/), the job store
 * that reads and writes it (functions/adapters/dynamodb/job-table.ts) and the local stack's emulated table. Constants only,
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
  /** Epoch seconds after which DynamoDB may delete the item (final jobs, old dedupe keys). */
  ttlAttribute: 'ttl',
} as const;
