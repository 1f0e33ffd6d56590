/** Lambda entry point of the event-ingest function: the ingest's dependencies, built once per container. */
import { createDynamoDbClient, createSqsClient } from '../../adapters/aws-clients';
import { createObservability, observed } from '../../commons/observability';
import { buildIngestDeps } from '../../wiring/ingest';
import { lambdaEnvironment } from '../../wiring/lambda';
import { makeEventIngestHandler } from './make-handler';

const { settings, config, secrets } = lambdaEnvironment();

export const handler = makeEventIngestHandler(
  buildIngestDeps({
    config,
    secrets,
    dynamodb: createDynamoDbClient(),
    sqs: createSqsClient(),
    tableName: settings.tableName,
    queueUrl: settings.queueUrl,
    sealingSecretName: settings.sealingSecretName,
  }),
  createObservability('event-ingest', observed(settings)),
);
