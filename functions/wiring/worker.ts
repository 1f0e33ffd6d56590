/** The worker's dependencies: the job table, the queues, the service, the bucket and the event bus. */
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoJobRepository } from '../adapters/dynamodb/job-table';
import { DynamoServiceEstimates } from '../adapters/dynamodb/service-estimates';
import { EventBridgePublisher } from '../adapters/eventbridge/event-publisher';
import { S3DocumentStore } from '../adapters/s3/document-store';
import { SqsJobQueue } from '../adapters/sqs/job-queue';
import type { LoadedConfig } from '../config/compile';
import type { WorkerDeps } from '../core/process-job';
import { serviceOrigin } from '../core/worker-deps';
import type { WorkerHandlerDeps } from '../handlers/worker/make-handler';
import type { EventPublisher } from '../ports/event-publisher';
import type { SecretSource } from '../ports/secret-source';
import { buildDocumentService } from './document-service';

/** What the worker is built from. */
export interface WorkerParts {
  readonly config: LoadedConfig;
  readonly secrets: SecretSource;
  readonly dynamodb: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly s3: S3Client;
  /** Events go to EventBridge through this client, unless `events` gives a publisher (the local stack). */
  readonly eventBridge?: EventBridgeClient;
  readonly events?: EventPublisher;
  readonly eventBusName?: string;
  /** The deployment named in every EventBridge event. @default none */
  readonly deployment?: string;
  readonly tableName: string;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly bucket: string;
  readonly sealingSecretName: string;
  readonly maxReceiveCount: number;
  readonly leaseMs: number;
  /** The service root. @default config.service.baseUrl */
  readonly docgenBaseUrl?: string;
  /** Retry budget of one service call, in milliseconds. @default 20_000 */
  readonly docgenRetryBudgetMs?: number;
  readonly partSize?: number;
  readonly retryBaseSeconds?: number;
  readonly outageBudgetMs?: number;
}

/** Builds the worker's dependencies. */
export function buildWorkerDeps(parts: WorkerParts): WorkerHandlerDeps {
  const { docgen, templates } = buildDocumentService(parts.config, parts.secrets, {
    ...(parts.docgenBaseUrl === undefined ? {} : { baseUrl: parts.docgenBaseUrl }),
    ...(parts.docgenRetryBudgetMs === undefined ? {} : { retryBudgetMs: parts.docgenRetryBudgetMs }),
  });
  const events =
    parts.events ??
    new EventBridgePublisher(
      parts.eventBridge ?? missing('an EventBridge client or an event publisher'),
      parts.eventBusName,
      parts.deployment,
    );
  const worker: Omit<WorkerDeps, 'log'> = {
    config: parts.config,
    jobs: new DynamoJobRepository(parts.dynamodb, parts.tableName),
    // What the workers learn of the service (its links' lifetime), shared through the same table.
    estimates: new DynamoServiceEstimates(parts.dynamodb, parts.tableName),
    serviceKey: serviceOrigin(parts.docgenBaseUrl ?? parts.config.config.service.baseUrl),
    docgen,
    templates,
    store: new S3DocumentStore(
      parts.s3,
      parts.bucket,
      parts.partSize === undefined ? {} : { partSize: parts.partSize },
    ),
    events,
    secrets: parts.secrets,
    sealingSecretName: parts.sealingSecretName,
    leaseMs: parts.leaseMs,
    maxReceiveCount: parts.maxReceiveCount,
    ...(parts.retryBaseSeconds === undefined ? {} : { retryBaseSeconds: parts.retryBaseSeconds }),
    ...(parts.outageBudgetMs === undefined ? {} : { outageBudgetMs: parts.outageBudgetMs }),
  };
  return {
    worker,
    queue: new SqsJobQueue(parts.sqs, parts.queueUrl),
    deadLetters: new SqsJobQueue(parts.sqs, parts.dlqUrl),
  };
}

function missing(what: string): never {
  throw new Error(`the worker needs ${what}`);
}
