/**
 * The local stack's HTTP side: the jobs API, the ingest handlers of the running configuration and the web
 * console behind the server that stands in for API Gateway.
 */
import type { AwsClients } from '../../functions/adapters/aws-clients';
import type { DynamoJobRepository } from '../../functions/adapters/dynamodb/job-table';
import type { FileSecretSource } from '../../functions/adapters/local/file-secret-source';
import type { SqsJobQueue } from '../../functions/adapters/sqs/job-queue';
import { createObservability, type LogLevel } from '../../functions/commons/observability';
import type { LoadedConfig } from '../../functions/config/compile';
import { makeJobsApiHandler } from '../../functions/handlers/jobs-api/make-handler';
import { buildDocumentService } from '../../functions/wiring/document-service';
import { buildJobsApiDeps } from '../../functions/wiring/jobs-api';
import { consoleRoutes } from '../console/console-routes';
import { sqsDeadLetters } from '../console/dead-letters';
import { type ApiHandler, publicUrlHosts, startApiServer } from './api-server';
import type { AwsEmulators } from './aws-emulators';
import type { IngestWiring } from './ingest-wiring';
import { localContext } from './lambda-context';
import { lambdaEnvironments } from './lambda-environments';
import { LOCAL_SEALING_SECRET } from './workers';

/** What the local API is built from. */
export interface StackApiParts {
  /** The ingest handlers of the configuration running now (they change on reload). */
  readonly wiring: () => IngestWiring;
  /** The configuration at start and its secrets (the console's template reads). */
  readonly config: LoadedConfig;
  readonly secrets: FileSecretSource;
  readonly aws: AwsEmulators;
  readonly clients: AwsClients;
  readonly jobs: DynamoJobRepository;
  readonly queue: SqsJobQueue;
  readonly docgenUrl: string;
  /** Whether the workers run (false while their process restarts), for `/healthz`. */
  readonly workersAlive: () => boolean;
  readonly logLevel: LogLevel;
  readonly port: number;
  readonly line: (text: string) => void;
}

/** Starts the local API on loopback; resolves to its URL and close. */
export async function startStackApi(parts: StackApiParts): Promise<{ url: string; close(): Promise<void> }> {
  const { aws, clients, logLevel } = parts;
  const jobsApiDeps = buildJobsApiDeps({
    dynamodb: clients.dynamodb,
    tableName: aws.tableName,
    s3: clients.s3,
    bucket: aws.bucket,
  });
  // Each request in an environment of its own, as on Lambda (./lambda-environments.ts).
  const jobsApi = lambdaEnvironments(
    () => makeJobsApiHandler(jobsApiDeps, createObservability('jobs-api', { logLevel })) as ApiHandler,
  );
  return startApiServer(
    {
      ingest: (event, context) => parts.wiring().ingest.invoke(event, context),
      jobs: jobsApi.invoke,
      health: () => ({ workers: parts.workersAlive() ? 'running' : 'restarting' }),
      putEvent: (integrationId, event) =>
        parts.wiring().eventIngest.invoke({ integrationId, event }, localContext('event-ingest', 30_000)),
      console: consoleRoutes({
        jobs: parts.jobs,
        queue: parts.queue,
        deadLetters: sqsDeadLetters(clients.sqs, aws.dlqUrl),
        // The configuration the stack runs now (it is reloaded when the file changes).
        get config() {
          return parts.wiring().config;
        },
        templates: buildDocumentService(parts.config, parts.secrets, { baseUrl: parts.docgenUrl }).templates,
        sealingSecret: () => parts.secrets.get(LOCAL_SEALING_SECRET),
        stackLabel: 'local',
      }),
      publicHosts: () => publicUrlHosts(parts.wiring().config),
    },
    { port: parts.port, onRequest: parts.line },
  );
}
