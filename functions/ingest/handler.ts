/**
 * Lambda entry point of the ingest function: the handler, built once per container from only what the
 * ingest uses: the configuration, Secrets Manager, the job table and the queue. Not `lambdaRuntime()`: that
 * also builds the S3, EventBridge and service clients, which would be bundled and loaded on every cold start
 * for nothing (docs/benchmarks.md, "cold start": −20% bytes and load time).
 */
import { isAbsolute, join } from 'node:path';
import { createDynamoDbClient, createSecretsManagerClient, createSqsClient } from '../commons/aws-clients';
import { readLambdaSettings } from '../commons/env';
import { createObservability } from '../commons/observability';
import { SecretsManagerSource } from '../commons/secrets-manager-source';
import { loadBundledConfigSync } from '../config/bundled';
import { JobStore } from '../jobs/job-store';
import { JobQueue } from '../queue/job-queue';
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
