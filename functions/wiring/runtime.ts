/**
 * The composition root shared by every Lambda entry point and the local stack: from settings, the clients
 * and domain services the handlers take. Only configuration differs between AWS and the local stack.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { type AwsClientSettings, type AwsClients, createAwsClients } from '../adapters/aws-clients';
import { JobStore } from '../adapters/dynamodb/job-table';
import {
  EventBridgePublisher,
  type EventPublisher,
  FileEventPublisher,
} from '../adapters/eventbridge/event-publisher';
import type { SecretSource } from '../adapters/local/file-secret-source';
import { JobQueue } from '../adapters/sqs/job-queue';
import type { LoadedConfig } from '../config/compile';
import { DocgenClient } from '../docgen/client';
import type { TemplateSource } from '../mapping/mapper';
import { createTemplateCache } from '../mapping/template-cache';

/** Everything a runtime is built from. */
export interface RuntimeSettings {
  readonly config: LoadedConfig;
  readonly aws: AwsClientSettings;
  readonly tableName: string;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly bucket: string;
  readonly secrets: SecretSource;
  /** Secret that seals payloads and download links at rest. */
  readonly sealingSecretName: string;
  /** The service root; @default config.service.baseUrl */
  readonly docgenBaseUrl?: string;
  /** Events: to this EventBridge bus (default bus when absent), or, locally, to a JSON-lines file. */
  readonly events:
    | { readonly busName?: string }
    | { readonly file: string }
    | { readonly publisher: EventPublisher };
  /** Receives of a job message before it is dead-lettered. */
  readonly maxReceiveCount: number;
  /** The jobs queue's visibility timeout (a worker's lease), in milliseconds. */
  readonly leaseMs: number;
  /** Multipart part size of the copy to S3. */
  readonly partSize?: number;
  /** Base of the worker's exponential backoff between attempts, in seconds. @default 5 */
  readonly retryBaseSeconds?: number;
  /** Retry budget of one service call inside a worker attempt, in milliseconds. @default 20_000 */
  readonly docgenRetryBudgetMs?: number;
}

/** The services handlers use. */
export interface Runtime {
  readonly settings: RuntimeSettings;
  readonly config: LoadedConfig;
  readonly clients: AwsClients;
  readonly s3: S3Client;
  readonly jobs: JobStore;
  readonly queue: JobQueue;
  readonly deadLetters: JobQueue;
  readonly docgen: DocgenClient;
  readonly templates: TemplateSource;
  readonly events: EventPublisher;
  readonly secrets: SecretSource;
}

/** Builds the runtime: clients once per process (per Lambda container). */
export function createRuntime(settings: RuntimeSettings): Runtime {
  const clients = createAwsClients(settings.aws);
  const service = settings.config.config.service;
  const apiKeySecret = service.apiKeySecret;
  const docgen = new DocgenClient({
    baseUrl: settings.docgenBaseUrl ?? service.baseUrl,
    apiKey: {
      get: () => settings.secrets.get(apiKeySecret),
      refresh: () => settings.secrets.refresh(apiKeySecret),
    },
    downloadOrigins: service.downloadOrigins,
    timeoutMs: (service.timeoutSeconds ?? 30) * 1000,
    retry: { totalBudgetMs: settings.docgenRetryBudgetMs ?? 20_000, maxAttempts: 4 },
  });
  return {
    settings,
    config: settings.config,
    clients,
    s3: clients.s3,
    jobs: new JobStore(clients.dynamodb, settings.tableName),
    queue: new JobQueue(clients.sqs, settings.queueUrl),
    deadLetters: new JobQueue(clients.sqs, settings.dlqUrl),
    docgen,
    templates: createTemplateCache({ getTemplate: (id) => docgen.getTemplate(id) }, { ttlMs: 60_000 }),
    events:
      'publisher' in settings.events
        ? settings.events.publisher
        : 'file' in settings.events
          ? new FileEventPublisher(settings.events.file)
          : new EventBridgePublisher(clients.eventBridge, settings.events.busName),
    secrets: settings.secrets,
  };
}
