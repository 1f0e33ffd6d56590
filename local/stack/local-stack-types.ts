/** The local stack's options and its running handle (./local-stack.ts starts it). */
import type { AwsClients } from '../../functions/adapters/aws-clients';
import type { DynamoJobRepository } from '../../functions/adapters/dynamodb/job-table';
import type { SqsJobQueue } from '../../functions/adapters/sqs/job-queue';
import type { LocalSettings } from '../../functions/commons/env';
import type { LogLevel } from '../../functions/commons/observability';
import type { LoadedConfig } from '../../functions/config/compile';
import type { ConfigProblem } from '../../functions/config/errors';
import type { IngestDeps } from '../../functions/core/accept-delivery';
import type { EmulatorHandle, EmulatorOptions } from '../emulator/server';
import type { AwsEmulators } from './aws-emulators';

/** Options of the local stack beyond the settings users give through environment variables. */
export interface LocalStackOptions {
  readonly settings: LocalSettings;
  /** The configuration, when already loaded (else read from settings.configPath). */
  readonly config?: LoadedConfig;
  /** Options of the embedded service emulator (faults, link lifetime, ...). */
  readonly emulator?: Omit<EmulatorOptions, 'apiKey'>;
  /** Visibility timeout of the jobs queue: how long a worker that died holds its job. @default 60 */
  readonly visibilityTimeoutSeconds?: number;
  /** Receives of a job message before it is dead-lettered. @default 5 */
  readonly maxReceiveCount?: number;
  /** Worker lanes. @default config.service.maxConcurrency */
  readonly concurrency?: number;
  /** Base of the worker's backoff between attempts, in seconds (small in tests). @default 5 */
  readonly retryBaseSeconds?: number;
  /** How often the reconciler runs. @default 30_000 */
  readonly reconcileIntervalMs?: number;
  /** How long past its lease a job may wait in a busy queue before it is sent again (ReconcileDeps). @default 15 minutes */
  readonly maxQueueWaitMs?: number;
  /**
   * How long the service's download links are trusted to live (WorkerDeps.linkLifetimeMs). @default from the
   * embedded emulator's link lifetime when it is set (less a margin for the time the answer took), else the
   * worker's default (55 minutes)
   */
  readonly linkLifetimeMs?: number;
  /** Powertools log level of the handlers. @default 'WARN' */
  readonly logLevel?: LogLevel;
  /** Hears one line per request and per notable event (the `npm start` console). */
  readonly onLine?: (line: string) => void;
  /**
   * Hears that the stack cannot go on: its AWS emulators' process ended without being asked (their queue is
   * gone with it and their ports are closed, so every webhook would be refused). `docrelay dev` stops then,
   * with exit code 1; started again on the same data, the stack resumes every open job. @default a console line
   */
  readonly onFatal?: (reason: string) => void;
  /**
   * How long after receipt a job keeps waiting out the service being unavailable, past the queue's receive
   * count (WorkerDeps.outageBudgetMs). @default 24 hours
   */
  readonly outageBudgetMs?: number;
  /**
   * How long the worker's service client may spend on one call, its retries and their waits (a `Retry-After` it
   * waits out in place) included; a longer `Retry-After` is waited out by a delayed message instead (small in
   * tests). @default 20_000, as on AWS
   */
  readonly docgenRetryBudgetMs?: number;
  /** Start without the worker poller (tests that fill the queue first). @default true */
  readonly startWorkers?: boolean;
  /**
   * Reload the configuration when its file changes (`reloadConfig` on each change, debounced); tests call
   * `reloadConfig` themselves. @default false
   */
  readonly watchConfig?: boolean;
  /** Check every rule against the service's templates at start and reload, told as warnings. @default true */
  readonly checkTemplates?: boolean;
  /**
   * Where the AWS emulators (DynamoDB, S3, SQS) run: in a child process of their own, on another core than
   * the handlers, or in this process. @default 'child'
   */
  readonly awsEmulators?: 'child' | 'in-process';
  /**
   * Where the worker lanes and the service emulator run: here, or a child restarted if it ends unasked
   * (`docrelay dev`: the ingest keeps its event loop). The child reads settings.configPath (`config` must be
   * that file's) with its own AWS clients: `clients` middleware and `emulator` stay here. @default 'in-process'
   */
  readonly workers?: 'child' | 'in-process';
}

/** What a config reload did: the new config runs, or the running one stays because the edit is broken. */
export type ReloadResult =
  | { readonly reloaded: true; readonly config: LoadedConfig; readonly warnings: readonly ConfigProblem[] }
  | { readonly reloaded: false; readonly problems: readonly ConfigProblem[]; readonly error?: string };

/** A running local stack. */
export interface LocalStack {
  /** Base URL of the API (webhooks at `${url}/v1/hooks/{integrationId}`). */
  readonly url: string;
  /** Base URL of the Document Generation Service in use. */
  readonly docgenUrl: string;
  /** Whether the service is the embedded emulator or one DOCGEN_BASE_URL named. */
  readonly docgen: 'embedded' | 'external';
  /** The embedded service emulator, when it runs in this process (`workers: 'in-process'`). */
  readonly emulator?: EmulatorHandle;
  readonly aws: AwsEmulators;
  /** The configuration the stack runs (the latest that loaded: see reloadConfig). */
  readonly config: LoadedConfig;
  /** The AWS SDK clients, pointed at the emulators. */
  readonly clients: AwsClients;
  /** The job table, as the handlers use it. */
  readonly jobs: DynamoJobRepository;
  /** The jobs queue and the dead-letter queue. */
  readonly queue: SqsJobQueue;
  readonly deadLetters: SqsJobQueue;
  /** What the ingest handlers are built from (tests build more handlers from it). */
  readonly ingestDeps: IngestDeps;
  /** Starts the worker poller (when started without it, or after stopWorkers). */
  startWorkers(): void;
  /**
   * Stops the worker poller, waiting for the batches in flight (simulates a worker going away); in child mode
   * it resolves once the child's lanes have finished theirs. Receives waiting in their long poll are waited
   * out (up to 1 s), and messages they bring go back to the queue at once: new jobs stay queued and visible.
   */
  stopWorkers(): Promise<void>;
  /**
   * Reads the config file again; when it is valid, the handlers are rebuilt with it (requests and batches in
   * flight finish with the old one; in child mode the workers have taken it when this resolves), else the
   * running config stays and the problems are told.
   */
  reloadConfig(): Promise<ReloadResult>;
  /** Runs one reconciler pass now. */
  reconcileNow(before?: number): Promise<{ deliveriesCompleted: number; jobsResent: number }>;
  /** Stops everything. */
  stop(): Promise<void>;
}
