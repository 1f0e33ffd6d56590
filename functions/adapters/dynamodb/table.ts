/** What the job store's modules share: the client, the table, the clock, and a strongly consistent read. */
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { JobStoreError } from './errors';
import type { ItemClock } from './keys';

/** The job table as the store's modules address it. */
export interface JobTableContext extends ItemClock {
  readonly ddb: DynamoDBDocumentClient;
  readonly tableName: string;
}

/** Reads one item whole (strongly consistent); an error is a JobStoreError for `operation`. */
export async function getItem(
  table: JobTableContext,
  pk: string,
  operation: string,
): Promise<Record<string, unknown> | undefined> {
  try {
    const result = await table.ddb.send(
      new GetCommand({ TableName: table.tableName, Key: { pk }, ConsistentRead: true }),
    );
    return result.Item;
  } catch (error) {
    throw new JobStoreError(operation, error);
  }
}
