/**
 * The job table's shape: the contract between the CDK construct that creates the table (lib/), the job store
 * that reads and writes it (functions/jobs/job-store.ts) and the local stack's emulated table. Constants only,
 * so lib/ can import it without pulling in runtime code.
 */

/** Key schema, index and TTL attribute of docrelay's DynamoDB job table. */
export const JOB_TABLE = {
  /** Partition key (S) of every item: `job#<jobId>` or `delivery#<integration>#<deliveryId>`. */
  partitionKey: 'pk',
  /** Sparse GSI listing open deliveries and jobs by lease expiry, for the reconciler (projection ALL). */
  openJobsIndex: 'open-jobs',
  /** Hash key (S) of the open-jobs index: `"open"` while an item is open, absent once it is final. */
  openPartitionKey: 'openPk',
  /** Range key (N) of the open-jobs index: epoch milliseconds by which the item should have moved on. */
  openSortKey: 'leaseUntil',
  /** Epoch seconds after which DynamoDB may delete the item (final jobs, old dedupe keys). */
  ttlAttribute: 'ttl',
} as const;
