/**
 * The local stack's handlers that depend on the configuration (ingest, event ingest), built by the same
 * builders as on AWS; the stack builds them again when the configuration is reloaded.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { FileSecretSource } from '../../functions/adapters/local/file-secret-source';
import { createObservability, type LogLevel } from '../../functions/commons/observability';
import type { LoadedConfig } from '../../functions/config/compile';
import type { IngestDeps } from '../../functions/core/accept-delivery';
import { makeEventIngestHandler } from '../../functions/handlers/event-ingest/make-handler';
import { makeIngestHandler } from '../../functions/handlers/ingest/make-handler';
import { buildIngestDeps } from '../../functions/wiring/ingest';
import type { ApiHandler } from './api-server';
import { type Invoke, type LambdaEnvironments, lambdaEnvironments } from './lambda-environments';
import { LOCAL_SEALING_SECRET } from './workers';

/** What the ingest handlers need besides the configuration and its secrets. */
export interface IngestWiringContext {
  readonly dynamodb: DynamoDBClient;
  readonly tableName: string;
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly logLevel: LogLevel;
}

/** The ingest handlers for one configuration. */
export interface IngestWiring {
  readonly config: LoadedConfig;
  readonly ingestDeps: IngestDeps;
  readonly ingest: LambdaEnvironments<Parameters<ApiHandler>[0], Awaited<ReturnType<ApiHandler>>>;
  readonly eventIngest: LambdaEnvironments<unknown, unknown>;
}

/** Builds the ingest and event-ingest handlers for a configuration, each request in an environment of its own. */
export function wireIngest(
  context: IngestWiringContext,
  config: LoadedConfig,
  secrets: FileSecretSource,
): IngestWiring {
  const { logLevel, ...aws } = context;
  const ingestDeps = buildIngestDeps({ config, secrets, ...aws, sealingSecretName: LOCAL_SEALING_SECRET });
  // Each request in an environment of its own, as on Lambda (./lambda-environments.ts).
  return {
    config,
    ingestDeps,
    ingest: lambdaEnvironments(
      () => makeIngestHandler(ingestDeps, createObservability('ingest', { logLevel })) as ApiHandler,
    ),
    eventIngest: lambdaEnvironments(
      () =>
        makeEventIngestHandler(ingestDeps, createObservability('event-ingest', { logLevel })) as Invoke<
          unknown,
          unknown
        >,
    ),
  };
}
