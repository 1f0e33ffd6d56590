/**
 * Lambda entry point of the ingest function, built once per container from only what the ingest uses: the
 * configuration, Secrets Manager, the job table and the queue (no S3, EventBridge or service client is
 * bundled or loaded: docs/benchmarks.md, "cold start").
 */
import { createDynamoDbClient, createSqsClient } from '../../adapters/aws-clients';
import { createObservability, observed } from '../../commons/observability';
import { buildIngestDeps } from '../../wiring/ingest';
import { lambdaEnvironment } from '../../wiring/lambda';
import { makeIngestHandler } from './make-handler';

const { settings, config, secrets } = lambdaEnvironment();

export const handler = makeIngestHandler(
  buildIngestDeps({
    config,
    secrets,
    dynamodb: createDynamoDbClient(),
    sqs: createSqsClient(),
    tableName: settings.tableName,
    queueUrl: settings.queueUrl,
    sealingSecretName: settings.sealingSecretName,
  }),
  createObservability('ingest', observed(settings)),
);
