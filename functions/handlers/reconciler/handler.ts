/** Lambda entry point of the reconciler function: the job table and the queue, built once per container. */
import { createDynamoDbClient, createSqsClient } from '../../adapters/aws-clients';
import { readLambdaSettings } from '../../commons/env';
import { createObservability, observed } from '../../commons/observability';
import { buildReconcilerDeps } from '../../wiring/reconciler';
import { makeReconcilerHandler } from './make-handler';

const settings = readLambdaSettings();

export const handler = makeReconcilerHandler(
  buildReconcilerDeps({
    dynamodb: createDynamoDbClient(),
    sqs: createSqsClient(),
    tableName: settings.tableName,
    queueUrl: settings.queueUrl,
    leaseMs: settings.leaseSeconds * 1000,
  }),
  createObservability('reconciler', observed(settings)),
);
