/** Lambda entry point of the worker function: its dependencies, built once per container. */
import {
  createDynamoDbClient,
  createEventBridgeClient,
  createS3Client,
  createSqsClient,
} from '../../adapters/aws-clients';
import { createObservability, observed } from '../../commons/observability';
import { lambdaEnvironment } from '../../wiring/lambda';
import { buildWorkerDeps } from '../../wiring/worker';
import { makeWorkerHandler } from './make-handler';

const { settings, config, secrets } = lambdaEnvironment();

export const handler = makeWorkerHandler(
  buildWorkerDeps({
    config,
    secrets,
    dynamodb: createDynamoDbClient(),
    sqs: createSqsClient(),
    s3: createS3Client(),
    eventBridge: createEventBridgeClient(),
    ...(settings.eventBusName === undefined ? {} : { eventBusName: settings.eventBusName }),
    ...(settings.deployment === undefined ? {} : { deployment: settings.deployment }),
    tableName: settings.tableName,
    queueUrl: settings.queueUrl,
    dlqUrl: settings.dlqUrl,
    bucket: settings.bucket,
    sealingSecretName: settings.sealingSecretName,
    maxReceiveCount: settings.maxReceiveCount,
    leaseMs: settings.leaseSeconds * 1000,
  }),
  createObservability('worker', observed(settings)),
);
