/**
 * Lambda entry point of the ingest function, built once per container from only what the ingest uses (the
 * configuration, secrets, job table and queue), so no other client weighs on its bundle or cold start.
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
