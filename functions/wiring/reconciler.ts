/** The reconciler's dependencies: the job table and the jobs queue. */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoJobRepository } from '../adapters/dynamodb/job-table';
import { SqsJobQueue } from '../adapters/sqs/job-queue';
import type { ReconcileDeps } from '../core/reconcile';

/** Builds the reconciler's dependencies (its log comes from the handler). */
export function buildReconcilerDeps(parts: {
  readonly dynamodb: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly tableName: string;
  readonly queueUrl: string;
  readonly leaseMs: number;
}): Omit<ReconcileDeps, 'log'> {
  return {
    jobs: new DynamoJobRepository(parts.dynamodb, parts.tableName),
    queue: new SqsJobQueue(parts.sqs, parts.queueUrl),
    leaseMs: parts.leaseMs,
  };
}
