/** The job and delivery table, shaped by the table contract the runtime shares (functions/config/table-contract.ts). */
import type { RemovalPolicy } from 'aws-cdk-lib';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  Table,
  TableEncryption,
  type TableProps,
} from 'aws-cdk-lib/aws-dynamodb';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import { JOB_TABLE } from '../../functions/config/table-contract';

/** Inputs of `buildJobTable`. */
export interface JobTableOptions {
  readonly tableProps?: Partial<TableProps>;
  readonly encryptionKey?: IKey;
  readonly removalPolicy: RemovalPolicy;
  readonly deletionProtection: boolean;
}

/** On demand, point-in-time recoverable, expiring items by TTL, with the reconciler's open-jobs index. */
export function buildJobTable(scope: Construct, options: JobTableOptions): Table {
  const key = options.encryptionKey;
  const table = new Table(scope, 'Jobs', {
    ...options.tableProps,
    partitionKey: { name: JOB_TABLE.partitionKey, type: AttributeType.STRING },
    billingMode: BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    timeToLiveAttribute: JOB_TABLE.ttlAttribute,
    ...(key === undefined ? {} : { encryption: TableEncryption.CUSTOMER_MANAGED, encryptionKey: key }),
    removalPolicy: options.removalPolicy,
    deletionProtection: options.deletionProtection,
  });
  table.addGlobalSecondaryIndex({
    indexName: JOB_TABLE.openJobsIndex,
    partitionKey: { name: JOB_TABLE.openPartitionKey, type: AttributeType.STRING },
    sortKey: { name: JOB_TABLE.openSortKey, type: AttributeType.NUMBER },
    // Keys only: the reconciler reads each item it acts on from the table, so sealed payloads (up to 350 KB)
    // are not copied into the index on every write.
    projectionType: ProjectionType[JOB_TABLE.openJobsProjection],
  });
  return table;
}
