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

/** The job table's GSIs, by name. */
export type JobTableIndexName =
  | typeof JOB_TABLE.openJobsIndex
  | typeof JOB_TABLE.jobsByTimeIndex
  | typeof JOB_TABLE.byDeliveryIndex;

/** Every GSI of the job table, in the order they are added. */
export const JOB_TABLE_INDEXES: readonly JobTableIndexName[] = [
  JOB_TABLE.openJobsIndex,
  JOB_TABLE.jobsByTimeIndex,
  JOB_TABLE.byDeliveryIndex,
];

/** Inputs of `buildJobTable`. */
export interface JobTableOptions {
  readonly tableProps?: Partial<TableProps>;
  /** GSIs left out for a staged upgrade (DocRelayProps.omitTableIndexes). @default none */
  readonly omitIndexes?: readonly JobTableIndexName[];
  readonly encryptionKey?: IKey;
  readonly removalPolicy: RemovalPolicy;
  readonly deletionProtection: boolean;
}

/** On demand, point-in-time recoverable, expiring items by TTL, with the reconciler's open-jobs index and
 * the listing indexes (jobs by time, items by delivery id). */
export function buildJobTable(scope: Construct, options: JobTableOptions): Table {
  const key = options.encryptionKey;
  const omit = new Set<string>(options.omitIndexes ?? []);
  for (const name of omit) {
    if (!(JOB_TABLE_INDEXES as readonly string[]).includes(name)) {
      throw new Error(
        `DocRelay: omitTableIndexes names ${JSON.stringify(name)}, not an index of the job table (${JOB_TABLE_INDEXES.join(', ')})`,
      );
    }
  }
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
  const addIndex = (index: Parameters<Table['addGlobalSecondaryIndex']>[0]): void => {
    if (!omit.has(index.indexName)) table.addGlobalSecondaryIndex(index);
  };
  addIndex({
    indexName: JOB_TABLE.openJobsIndex,
    partitionKey: { name: JOB_TABLE.openPartitionKey, type: AttributeType.STRING },
    sortKey: { name: JOB_TABLE.openSortKey, type: AttributeType.NUMBER },
    // Keys only: the reconciler reads each item it acts on from the table, so sealed payloads are not copied
    // into the index on every write.
    projectionType: ProjectionType[JOB_TABLE.openJobsProjection],
  });
  // Listing jobs newest first without a scan. Only the attributes a list filters on are projected, so a job's
  // write reaches the index only when it is created and when its status changes (bench/cost-model.ts).
  addIndex({
    indexName: JOB_TABLE.jobsByTimeIndex,
    partitionKey: { name: JOB_TABLE.listPartitionKey, type: AttributeType.STRING },
    sortKey: { name: JOB_TABLE.listSortKey, type: AttributeType.STRING },
    projectionType: ProjectionType.INCLUDE,
    nonKeyAttributes: [...JOB_TABLE.jobsByTimeAttributes],
  });
  // A delivery and its jobs by delivery id alone; keys only, written once per item.
  addIndex({
    indexName: JOB_TABLE.byDeliveryIndex,
    partitionKey: { name: JOB_TABLE.deliveryIdKey, type: AttributeType.STRING },
    projectionType: ProjectionType.KEYS_ONLY,
  });
  return table;
}
