/**
 * The worker side of the local stack, in the stack's process or its own child (./workers-process.ts): the
 * service emulator unless an external service is named, the worker handlers built as on AWS
 * (functions/wiring/worker.ts) and their poller. Their events go to the data directory's events.jsonl.
 */
import { join } from 'node:path';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { AwsClients } from '../../functions/adapters/aws-clients';
import { FileEventPublisher } from '../../functions/adapters/local/file-event-publisher';
import { FileSecretSource } from '../../functions/adapters/local/file-secret-source';
import type { LocalSettings } from '../../functions/commons/env';
import { createObservability, type LogLevel } from '../../functions/commons/observability';
import type { LoadedConfig } from '../../functions/config/compile';
import { makeWorkerHandler } from '../../functions/handlers/worker/make-handler';
import type { EventPublisher } from '../../functions/ports/event-publisher';
import { buildWorkerDeps } from '../../functions/wiring/worker';
import { type EmulatorHandle, type EmulatorOptions, startEmulator } from '../emulator/server';
import type { AwsEmulators } from './aws-emulators';
import { type Poller, type PollerStopOptions, startPoller } from './poller';

/** Name of the secret that seals payloads and links at rest (created with a random value locally). */
export const LOCAL_SEALING_SECRET = 'docrelay/sealing-key';

/** How the worker side runs: plain data, so that it crosses to the workers' child as JSON. */
export interface WorkerSettings {
  readonly settings: LocalSettings;
  /** The AWS emulators' endpoints and resources. */
  readonly aws: Omit<AwsEmulators, 'stop'>;
  /** Options of the embedded service emulator (unless settings.docgenBaseUrl names a service). */
  readonly emulator?: Omit<EmulatorOptions, 'apiKey'>;
  /** How long the service's download links are trusted to live. @default trustedLinkLifetime */
  readonly linkLifetimeMs?: number;
  readonly maxReceiveCount: number;
  /** The jobs queue's visibility timeout, in milliseconds. */
  readonly leaseMs: number;
  readonly retryBaseSeconds?: number;
  readonly outageBudgetMs?: number;
  /** LocalStackOptions.docgenRetryBudgetMs. */
  readonly docgenRetryBudgetMs?: number;
  readonly logLevel: LogLevel;
  /** Worker lanes. @default config.service.maxConcurrency */
  readonly concurrency?: number;
}

/** What the worker side is started with. */
export interface WorkerSideOptions extends WorkerSettings {
  readonly config: LoadedConfig;
  readonly clients: Pick<AwsClients, 'dynamodb' | 'sqs' | 's3'>;
  /** Hears the console lines the workers produce (`job … stored: …`, `worker error: …`). */
  readonly onLine: (text: string) => void;
}

/** The running worker side. */
export interface WorkerSide {
  /** Base URL of the Document Generation Service in use. */
  readonly docgenUrl: string;
  /** The embedded service emulator, unless an external service is used. */
  readonly emulator?: EmulatorHandle;
  /** Starts the poller (a no-op when it runs). */
  startWorkers(): void;
  /** Stops the poller, waiting for the batches in flight (PollerStopOptions). */
  stopWorkers(options?: PollerStopOptions): Promise<void>;
  /** Rebuilds the worker handlers with a configuration: each lane runs it from its next batch. */
  useConfig(config: LoadedConfig): void;
  /** Stops the poller, then the emulator. */
  stop(): Promise<void>;
}

/** The secrets of the local stack: the secrets file, the service key overridden by DOCGEN_API_KEY. */
export function localSecrets(settings: LocalSettings, config: LoadedConfig): FileSecretSource {
  const overrides: Record<string, string> =
    settings.docgenApiKey === undefined
      ? {}
      : { [config.config.service.apiKeySecret]: settings.docgenApiKey };
  return new FileSecretSource(settings.secretsFile, overrides);
}

/** Starts the service emulator (unless an external service is named) and prepares the poller. */
export async function startWorkerSide(options: WorkerSideOptions): Promise<WorkerSide> {
  const { settings, aws, clients, onLine } = options;
  const service = options.config.config.service;
  // EMF metrics are for CloudWatch; printed locally they would drown the console. Powertools reads this
  // setting from the environment only.
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

  let emulator: EmulatorHandle | undefined;
  let docgenUrl = settings.docgenBaseUrl;
  if (docgenUrl === undefined) {
    emulator = await startEmulator({
      ...options.emulator,
      apiKey: await localSecrets(settings, options.config).get(service.apiKeySecret),
    });
    docgenUrl = emulator.url;
  }
  const stopEmulator = async (): Promise<void> => {
    await emulator?.stop();
  };
  try {
    const linkLifetimeMs = options.linkLifetimeMs ?? trustedLinkLifetime(emulator, options.emulator);
    const events = consoleEvents(join(settings.dataDir, 'events.jsonl'), onLine);
    const handlersFor = (config: LoadedConfig) => {
      const built = buildWorkerDeps({
        config,
        // A new secret source per config: the new one may name secrets the old one's cache has not seen.
        secrets: localSecrets(settings, config),
        dynamodb: clients.dynamodb,
        tableName: aws.tableName,
        sqs: clients.sqs,
        s3: clients.s3,
        events,
        queueUrl: aws.queueUrl,
        dlqUrl: aws.dlqUrl,
        bucket: aws.bucket,
        sealingSecretName: LOCAL_SEALING_SECRET,
        maxReceiveCount: options.maxReceiveCount,
        leaseMs: options.leaseMs,
        docgenBaseUrl: docgenUrl,
        ...(options.retryBaseSeconds === undefined ? {} : { retryBaseSeconds: options.retryBaseSeconds }),
        ...(options.outageBudgetMs === undefined ? {} : { outageBudgetMs: options.outageBudgetMs }),
        ...(options.docgenRetryBudgetMs === undefined
          ? {}
          : { docgenRetryBudgetMs: options.docgenRetryBudgetMs }),
      });
      return linkLifetimeMs === undefined ? built : { ...built, worker: { ...built.worker, linkLifetimeMs } };
    };
    let workerDeps = handlersFor(options.config);

    const queueArn =
      (
        await clients.sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: aws.queueUrl, AttributeNames: ['QueueArn'] }),
        )
      ).Attributes?.QueueArn ?? 'arn:aws:sqs:us-east-1:000000000000:docrelay-jobs';
    let poller: Poller | undefined;
    const stopWorkers = async (stopOptions?: PollerStopOptions): Promise<void> => {
      const current = poller;
      poller = undefined;
      await current?.stop(stopOptions);
    };
    return {
      docgenUrl,
      ...(emulator === undefined ? {} : { emulator }),
      startWorkers: () => {
        if (poller !== undefined) return;
        poller = startPoller({
          sqs: clients.sqs,
          queueUrl: aws.queueUrl,
          queueArn,
          region: aws.region,
          handlerForLane: () => {
            // One handler per lane and configuration: a new config reaches the lane at its next batch.
            let built: { from: typeof workerDeps; handler: ReturnType<typeof makeWorkerHandler> } | undefined;
            return (event, context) => {
              const current = workerDeps;
              if (built?.from !== current) {
                built = {
                  from: current,
                  handler: makeWorkerHandler(
                    current,
                    createObservability('worker', { logLevel: options.logLevel }),
                  ),
                };
              }
              return built.handler(event, context) as ReturnType<typeof built.handler>;
            };
          },
          concurrency: options.concurrency ?? service.maxConcurrency,
          onError: (error) =>
            onLine(`worker error: ${error instanceof Error ? error.message : String(error)}`),
        });
      },
      stopWorkers,
      useConfig: (config) => {
        workerDeps = handlersFor(config);
      },
      stop: async () => {
        // The queue stops with the stack.
        await stopWorkers({ abortReceives: true });
        await stopEmulator();
      },
    };
  } catch (error) {
    await stopEmulator();
    throw error;
  }
}

/** Local events: appended to a JSON-lines file (no EventBridge emulator runs) and told on the console. */
function consoleEvents(file: string, line: (text: string) => void): EventPublisher {
  const fileEvents = new FileEventPublisher(file);
  return {
    publish: async (type, detail) => {
      await fileEvents.publish(type, detail);
      const files = Array.isArray(detail.files)
        ? (detail.files as Array<{ bucket?: string; key?: string }>)
        : [];
      if (type === 'Document Stored') {
        line(
          `job ${String(detail.jobId)} stored: ${files.map((f) => `s3://${f.bucket}/${f.key}`).join(', ')}`,
        );
      } else {
        const error = detail.error as { code?: string; message?: string } | undefined;
        line(`job ${String(detail.jobId)} failed: ${error?.code ?? 'UNKNOWN'} ${error?.message ?? ''}`);
      }
    },
  };
}

/**
 * The link lifetime the worker may trust when the stack runs its own emulator with a lifetime set: the
 * emulator's, less a margin (a tenth, at least half a second) for the time between the link's creation and
 * the worker reading the answer. Undefined otherwise (the worker's default).
 */
function trustedLinkLifetime(
  emulator: EmulatorHandle | undefined,
  options: WorkerSettings['emulator'],
): number | undefined {
  if (emulator === undefined) return undefined;
  const ttl = options?.faults?.linkTtlMs ?? options?.linkTtlMs;
  return ttl === undefined ? undefined : trustedLinkLifetimeMs(ttl);
}

/** A link lifetime less the margin above: what a worker may trust of links that live `ttlMs`. */
export const trustedLinkLifetimeMs = (ttlMs: number): number =>
  Math.max(0, ttlMs - Math.max(500, ttlMs / 10));
