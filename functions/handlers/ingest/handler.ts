/**
 * Lambda entry point of the ingest function: the handler, built once per container from only what the
 * ingest uses: the configuration, Secrets Manager, the job table and the queue. Not `lambdaRuntime()`: that
 * also builds the S3, EventBridge and service clients, which would be bundled and loaded on every cold start
 * for nothing (docs/benchmarks.md, "cold start": −20% bytes and load time).
 */
import { isAbsolute, join } from 'node:path';
import {
  createDynamoDbClient,
  createSecretsManagerClient,
  createSqsClient,
} from '../../adapters/aws-clients';
import { JobStore } from '../../adapters/dynamodb/job-table';
import { SecretsManagerSource } from '../../adapters/secrets-manager/secret-source';
import { JobQueue } from '../../adapters/sqs/job-queue';
import { readLambdaSettings } from '../../commons/env';
import { createObservability } from '../../commons/observability';
import { loadBundledConfigSync } from '../../config/bundled';
import { makeIngestHandler } from './make-handler';

const settings = readLambdaSettings();

export const handler = makeIngestHandler(
  {
    config: loadBundledConfigSync(
      isAbsolute(settings.configPath) ? settings.configPath : join(__dirname, settings.configPath),
    ),
    secrets: new SecretsManagerSource(createSecretsManagerClient()),
    jobs: new JobStore(createDynamoDbClient(), settings.tableName),
    queue: new JobQueue(createSqsClient(), settings.queueUrl),
    settings: { sealingSecretName: settings.sealingSecretName },
  },
  createObservability('ingest'),
);
