/**
 * The local stack's scan for failed jobs: its dead-letter queue lives in memory, so at start-up it parks the
 * failed jobs of the (persistent) table again and a restart loses no failure. Local only: on AWS the
 * dead-letter queue keeps its messages, and nothing scans the table.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { toJob } from '../../functions/adapters/dynamodb/keys';
import { pages } from '../../functions/adapters/dynamodb/paging';
import type { JobRecord } from '../../functions/core/job';

/** Scan pages read at most (each up to 1 MB). */
const MAX_PAGES = 100;

/** The table to scan, and the client to scan it with. */
export interface FailedJobsTable {
  readonly dynamodb: DynamoDBDocumentClient;
  readonly tableName: string;
}

/** Failed jobs of the table, at most `limit`, by a scan page by page. */
export async function scanFailedJobs(table: FailedJobsTable, limit = 10_000): Promise<JobRecord[]> {
  const request = {
    scan: {
      TableName: table.tableName,
      FilterExpression: '#kind = :job AND #status = :failed',
      ExpressionAttributeNames: { '#kind': 'kind', '#status': 'status' },
      ExpressionAttributeValues: { ':job': 'job', ':failed': 'failed' },
    },
  };
  const failed: JobRecord[] = [];
  for await (const page of pages(table.dynamodb, request, 'list failed jobs', MAX_PAGES)) {
    failed.push(...page.items.slice(0, limit - failed.length).map(toJob));
    if (failed.length >= limit) break;
  }
  return failed;
}
