/** The ingest's and the event ingest's dependencies: the job table and the jobs queue, nothing more. */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoJobRepository } from '../adapters/dynamodb/job-table';
import { SqsJobQueue } from '../adapters/sqs/job-queue';
import type { LoadedConfig } from '../config/compile';
import type { IngestDeps } from '../core/accept-delivery';
import type { SecretSource } from '../ports/secret-source';

/** What the ingest is built from. */
export interface IngestParts {
  readonly config: LoadedConfig;
  readonly secrets: SecretSource;
  readonly dynamodb: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly tableName: string;
  readonly queueUrl: string;
  readonly sealingSecretName: string;
}

/** Builds what accepting a delivery needs (webhooks and EventBridge events alike). */
export function buildIngestDeps(parts: IngestParts): IngestDeps {
  return {
    config: parts.config,
    secrets: parts.secrets,
    jobs: new DynamoJobRepository(parts.dynamodb, parts.tableName),
    queue: new SqsJobQueue(parts.sqs, parts.queueUrl),
    sealingSecretName: parts.sealingSecretName,
  };
}
