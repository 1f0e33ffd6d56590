/**
 * The local stack: docrelay whole on one machine. The same handlers as on AWS, built by the same dependency
 * builders (functions/wiring/), with the AWS SDK clients pointed at embedded emulators on loopback, the Document Generation
 * Service emulator (unless DOCGEN_BASE_URL names a real service), an HTTP server in place of API Gateway, a
 * poller in place of Lambda's SQS event source, and the reconciler on an interval. The web console is served
 * at the API's root (local/console/). The AWS emulators run in a child process of their own, and so may the
 * workers with the service emulator (./workers-process.ts; what `docrelay dev` does).
 */
import { randomBytes } from 'node:crypto';
import { watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { type AwsClients, createAwsClients } from '../../functions/adapters/aws-clients';
import { DynamoJobRepository } from '../../functions/adapters/dynamodb/job-table';
import type { FileSecretSource } from '../../functions/adapters/local/file-secret-source';
import { SqsJobQueue } from '../../functions/adapters/sqs/job-queue';
import type { LocalSettings } from '../../functions/commons/env';
import { createObservability, type LogLevel } from '../../functions/commons/observability';
import type { LoadedConfig } from '../../functions/config/compile';
import { ConfigError, type ConfigProblem } from '../../functions/config/errors';
import { loadConfigFile } from '../../functions/config/load';
import type { IngestDeps } from '../../functions/core/accept-delivery';
import { reconcile, releaseAbandonedLeases } from '../../functions/core/reconcile';
import { DocgenClient } from '../../functions/docgen/client';
import { makeEventIngestHandler } from '../../functions/handlers/event-ingest/make-handler';
import { makeIngestHandler } from '../../functions/handlers/ingest/make-handler';
import { makeJobsApiHandler } from '../../functions/handlers/jobs-api/make-handler';
import { checkConfigAgainstTemplates } from '../../functions/mapping/config-check';
import { buildDocumentService } from '../../functions/wiring/document-service';
import { buildIngestDeps } from '../../functions/wiring/ingest';
import { buildJobsApiDeps } from '../../functions/wiring/jobs-api';
import { buildReconcilerDeps } from '../../functions/wiring/reconciler';
import { consoleRoutes } from '../console/console-routes';
import { sqsDeadLetters } from '../console/dead-letters';
import type { EmulatorHandle, EmulatorOptions } from '../emulator/server';
import { ensureDevSecrets, lockDataDir, writeEndpoints, writeJsonAtomic } from '../state-files';
import { type ApiHandler, publicUrlHosts, startApiServer } from './api-server';
import { type AwsEmulators, LOCAL_CREDENTIALS, startAwsEmulators } from './aws-emulators';
import { startAwsEmulatorsProcess } from './aws-emulators-process';
import { displayPath, problemLines, warningLines } from './config-report';
import { type FailedJobsTable, scanFailedJobs } from './failed-jobs';
import { localContext } from './lambda-context';
import { type Invoke, lambdaEnvironments } from './lambda-environments';
import { LOCAL_SEALING_SECRET, localSecrets, startWorkerSide, type WorkerSettings } from './workers';
import { startSupervisedWorkersProcess, type WorkersProcess } from './workers-process';

export { LOCAL_SEALING_SECRET, trustedLinkLifetimeMs } from './workers';

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
   * Where the worker lanes and the embedded service emulator run: a child process of their own (what `docrelay
   * dev` uses: the ingest then has its event loop to itself), or this process. The child reads the config from
   * settings.configPath (`config`, when given, must be that file's) and has its own AWS clients: middleware
   * added to `clients` reaches the ingest only, and `emulator` is undefined. The emulator's `clock` option
   * cannot cross to the child. A child that ends without being asked is started again
   * (./workers-process.ts, startSupervisedWorkersProcess). @default 'in-process'
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

/** The worker side as the stack drives it, in this process or in the workers' child. */
type Workers = Pick<
  WorkersProcess,
  'docgenUrl' | 'alive' | 'startWorkers' | 'stopWorkers' | 'useConfig' | 'stop'
> & {
  readonly emulator?: EmulatorHandle;
};

/** Starts the local stack. */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  const { settings } = options;
  const line = options.onLine ?? (() => undefined);
  const config = options.config ?? (await loadConfigFile(settings.configPath));
  const service = config.config.service;

  await ensureConfigSecrets(settings.secretsFile, config, line);
  const secrets = localSecrets(settings, config);

  const stops: Array<() => Promise<void>> = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    stops.length = 0;
  };
  // DynamoDB's LevelDB files allow one process: a second stack on the same directory is told so up front.
  stops.push(await lockDataDir(settings.dataDir));
  try {
    const visibility = options.visibilityTimeoutSeconds ?? 60;
    const maxReceiveCount = options.maxReceiveCount ?? 5;
    const awsOptions = { dataDir: settings.dataDir, maxReceiveCount, visibilityTimeoutSeconds: visibility };
    const aws: AwsEmulators =
      options.awsEmulators === 'in-process'
        ? await startAwsEmulators(awsOptions)
        : await startAwsEmulatorsProcess({
            ...awsOptions,
            onExit: (reason) => (options.onFatal ?? ((why) => line(`error: ${why}`)))(reason),
          });
    stops.push(() => aws.stop());

    const clients = createAwsClients({
      region: aws.region,
      credentials: LOCAL_CREDENTIALS,
      endpoints: aws.endpoints,
    });
    stops.push(async () => {
      for (const client of Object.values(clients)) client.destroy();
    });
    const tables = { dynamodb: clients.dynamodb, tableName: aws.tableName };
    const jobs = new DynamoJobRepository(clients.dynamodb, aws.tableName);
    const queue = new SqsJobQueue(clients.sqs, aws.queueUrl);
    const deadLetters = new SqsJobQueue(clients.sqs, aws.dlqUrl);
    const logLevel = options.logLevel ?? 'WARN';
    // EMF metrics are for CloudWatch; printed locally they would drown the console. Powertools reads this
    // setting from the environment only (a workers' child inherits it).
    process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

    const workerSettings: WorkerSettings = {
      settings,
      aws: {
        region: aws.region,
        endpoints: aws.endpoints,
        tableName: aws.tableName,
        bucket: aws.bucket,
        queueUrl: aws.queueUrl,
        dlqUrl: aws.dlqUrl,
      },
      maxReceiveCount,
      leaseMs: visibility * 1000,
      logLevel,
      ...(options.emulator === undefined ? {} : { emulator: options.emulator }),
      ...(options.linkLifetimeMs === undefined ? {} : { linkLifetimeMs: options.linkLifetimeMs }),
      ...(options.retryBaseSeconds === undefined ? {} : { retryBaseSeconds: options.retryBaseSeconds }),
      ...(options.outageBudgetMs === undefined ? {} : { outageBudgetMs: options.outageBudgetMs }),
      ...(options.docgenRetryBudgetMs === undefined
        ? {}
        : { docgenRetryBudgetMs: options.docgenRetryBudgetMs }),
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    };
    // Built before the workers: a restarted workers' process has the reconciler release what its predecessor held.
    const reconcilerLog = createObservability('reconciler', { logLevel }).logger;
    let reconcilerDeps = buildReconcilerDeps({
      ...tables,
      sqs: clients.sqs,
      queueUrl: aws.queueUrl,
      leaseMs: visibility * 1000,
    });
    if (options.maxQueueWaitMs !== undefined)
      reconcilerDeps = { ...reconcilerDeps, maxQueueWaitMs: options.maxQueueWaitMs };
    /** The configuration the handlers run (what a restarted workers' process starts with). */
    let running = config;
    let workers: Workers;
    if (options.workers === 'child') {
      workers = await startSupervisedWorkersProcess({
        ...workerSettings,
        onLine: line,
        currentConfig: () => ({ config: running.config, source: running.source }),
        beforeResume: async () => {
          const released = await releaseAbandonedLeases({ ...reconcilerDeps, log: reconcilerLog });
          if (released > 0) line(`jobs the dead workers' process held, sent again: ${released}`);
        },
      });
    } else {
      const side = await startWorkerSide({ ...workerSettings, config, clients, onLine: line });
      // In this process: they live as long as the stack does.
      workers = { ...side, alive: true, useConfig: async (loaded) => side.useConfig(loaded) };
    }
    // The service emulator (or the workers' child) stops after the API, before the AWS emulators.
    stops.push(() => workers.stop());
    const docgenUrl = workers.docgenUrl;

    /** The ingest handlers, which depend on the configuration, built by the same builders as on AWS. */
    const wire = (loaded: LoadedConfig, secrets: FileSecretSource) => {
      const ingestDeps = buildIngestDeps({
        config: loaded,
        secrets,
        ...tables,
        sqs: clients.sqs,
        queueUrl: aws.queueUrl,
        sealingSecretName: LOCAL_SEALING_SECRET,
      });
      // Each request in an environment of its own, as on Lambda (./lambda-environments.ts).
      return {
        config: loaded,
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
    };
    let wiring = wire(config, secrets);

    const templateClient = new DocgenClient({
      baseUrl: docgenUrl,
      apiKey: { get: () => secrets.get(service.apiKeySecret) },
      downloadOrigins: service.downloadOrigins ?? [],
    });
    const checkTemplates = async (loaded: LoadedConfig): Promise<ConfigProblem[]> => {
      if (options.checkTemplates === false) return [];
      const source = displayPath(settings.configPath, process.cwd());
      try {
        const report = await checkConfigAgainstTemplates(loaded, templateClient);
        const warnings = [...report.problems, ...report.warnings];
        for (const text of warningLines(source, warnings)) line(text);
        return warnings;
      } catch (error) {
        line(`warning: mappings not checked against the templates at ${docgenUrl}: ${firstLineOf(error)}`);
        return [];
      }
    };
    const jobsApiDeps = buildJobsApiDeps({ ...tables, s3: clients.s3, bucket: aws.bucket });
    const jobsApi = lambdaEnvironments(
      () => makeJobsApiHandler(jobsApiDeps, createObservability('jobs-api', { logLevel })) as ApiHandler,
    );

    const api = await startApiServer(
      {
        ingest: (event, context) => wiring.ingest.invoke(event, context),
        jobs: jobsApi.invoke,
        health: () => ({ workers: workers.alive ? 'running' : 'restarting' }),
        putEvent: (integrationId, event) =>
          wiring.eventIngest.invoke({ integrationId, event }, localContext('event-ingest', 30_000)),
        console: consoleRoutes({
          jobs,
          queue,
          deadLetters: sqsDeadLetters(clients.sqs, aws.dlqUrl),
          // The configuration the stack runs now (it is reloaded when the file changes).
          get config() {
            return wiring.config;
          },
          templates: buildDocumentService(config, secrets, { baseUrl: docgenUrl }).templates,
          sealingSecret: () => secrets.get(LOCAL_SEALING_SECRET),
          stackLabel: 'local',
        }),
        publicHosts: () => publicUrlHosts(wiring.config),
      },
      { port: settings.port, onRequest: line },
    );
    stops.push(() => api.close());

    // Stopped first (after the reconciler): batches in flight finish while the API and the emulators run. The
    // queue goes with the stack, so the receives waiting in their long poll end at once.
    stops.push(() => workers.stopWorkers({ abortReceives: true }));

    const reconcileNow = (before?: number) => reconcile({ ...reconcilerDeps, log: reconcilerLog }, before);
    // The queue emulator keeps messages in memory only: at start-up every open job needs its message again,
    // and every failed job its place in the dead-letter queue (as on AWS, where that queue is durable).
    const resumed = await reconcileNow(Number.MAX_SAFE_INTEGER);
    if (resumed.jobsResent + resumed.deliveriesCompleted > 0) {
      line(
        `resumed ${resumed.jobsResent} open jobs and ${resumed.deliveriesCompleted} deliveries from ${settings.dataDir}`,
      );
    }
    const parked = await parkFailedJobs(tables, deadLetters);
    if (parked > 0) line(`parked ${parked} failed jobs in the dead-letter queue again`);
    const interval = setInterval(() => {
      reconcileNow().catch((error: unknown) =>
        line(`reconciler error: ${error instanceof Error ? error.message : String(error)}`),
      );
    }, options.reconcileIntervalMs ?? 30_000);
    interval.unref();
    stops.push(async () => clearInterval(interval));

    if (options.startWorkers ?? true) workers.startWorkers();
    await checkTemplates(config);

    let reloading: Promise<ReloadResult> | undefined;
    const reloadOnce = async (): Promise<ReloadResult> => {
      const source = displayPath(settings.configPath, process.cwd());
      let loaded: LoadedConfig;
      try {
        loaded = await loadConfigFile(settings.configPath);
      } catch (error) {
        const problems = error instanceof ConfigError ? error.problems : [];
        line(
          `config not reloaded, the running config stays: ${problems.length === 0 ? firstLineOf(error) : ''}`.trimEnd(),
        );
        for (const text of problemLines(source, problems)) line(text);
        return { reloaded: false, problems, ...(problems.length === 0 ? { error: firstLineOf(error) } : {}) };
      }
      await ensureConfigSecrets(settings.secretsFile, loaded, line);
      try {
        await workers.useConfig(loaded);
      } catch (error) {
        line(
          `config not reloaded, the running config stays: the workers did not take it: ${firstLineOf(error)}`,
        );
        return { reloaded: false, problems: [], error: firstLineOf(error) };
      }
      // A new secret source: the new config may name secrets the old one's cache has not seen.
      wiring = wire(loaded, localSecrets(settings, loaded));
      running = loaded;
      line(`config reloaded from ${source}: ${describeConfig(loaded)}`);
      const warnings = await checkTemplates(loaded);
      return { reloaded: true, config: loaded, warnings };
    };
    const reloadConfig = (): Promise<ReloadResult> => {
      // One reload at a time; a change during one is read by the next.
      const next = (reloading ?? Promise.resolve()).then(reloadOnce, reloadOnce);
      reloading = next;
      return next;
    };
    if (options.watchConfig === true) stops.push(watchFile(settings.configPath, () => void reloadConfig()));

    await writeEndpoints(settings.dataDir, {
      api: api.url,
      docgen: { baseUrl: docgenUrl },
      aws: {
        region: aws.region,
        ...aws.endpoints,
        bucket: aws.bucket,
        queueUrl: aws.queueUrl,
        dlqUrl: aws.dlqUrl,
        table: aws.tableName,
      },
      pid: process.pid,
    });

    return {
      url: api.url,
      docgenUrl,
      docgen: settings.docgenBaseUrl === undefined ? 'embedded' : 'external',
      ...(workers.emulator === undefined ? {} : { emulator: workers.emulator }),
      aws,
      get config() {
        return wiring.config;
      },
      clients,
      jobs,
      queue,
      deadLetters,
      get ingestDeps() {
        return wiring.ingestDeps;
      },
      startWorkers: () => workers.startWorkers(),
      stopWorkers: () => workers.stopWorkers(),
      reloadConfig,
      reconcileNow,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** Creates the development secrets the config names and the secrets file lacks, and says which. */
async function ensureConfigSecrets(
  file: string,
  config: LoadedConfig,
  line: (text: string) => void,
): Promise<void> {
  const secretNames = new Set<string>([config.config.service.apiKeySecret, LOCAL_SEALING_SECRET]);
  const standardWebhooksSecrets = new Set<string>();
  for (const integration of config.config.integrations) {
    const secret = integration.verify?.secret;
    for (const name of secret === undefined ? [] : Array.isArray(secret) ? secret : [secret]) {
      secretNames.add(name);
      if (integration.verify?.scheme === 'standard-webhooks') standardWebhooksSecrets.add(name);
    }
  }
  const created = [
    ...(await ensureStandardWebhooksSecrets(file, standardWebhooksSecrets)),
    ...(await ensureDevSecrets(file, [...secretNames])),
  ];
  if (created.length > 0) line(`created development secrets in ${file}: ${created.join(', ')}`);
}

/** `N integration(s), M rule(s)`. */
export function describeConfig(loaded: LoadedConfig): string {
  const integrations = [...loaded.integrations.values()];
  const rules = integrations.reduce((n, i) => n + i.rules.length, 0);
  return `${integrations.length} integration(s), ${rules} rule(s)`;
}

const firstLineOf = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';

/**
 * Calls `onChange` (debounced) when the file changes. Watches the folder, since editors often save by
 * writing a new file and renaming it over the old one. Resolves to the stop function.
 */
function watchFile(path: string, onChange: () => void): () => Promise<void> {
  const name = basename(path);
  let timer: NodeJS.Timeout | undefined;
  const watcher = watch(dirname(path), (_event, changed) => {
    if (changed !== null && changed !== name) return;
    clearTimeout(timer);
    timer = setTimeout(onChange, 150);
  });
  watcher.on('error', () => undefined);
  return async () => {
    clearTimeout(timer);
    watcher.close();
  };
}

/** Sends every failed job's message to the (new, empty) dead-letter queue with its reason; returns how many. */
async function parkFailedJobs(tables: FailedJobsTable, deadLetters: SqsJobQueue): Promise<number> {
  const failed = await scanFailedJobs(tables);
  const byReason = new Map<string, string[]>();
  for (const job of failed) {
    const reason = job.error?.code ?? 'FAILED';
    byReason.set(reason, [...(byReason.get(reason) ?? []), job.jobId]);
  }
  for (const [reason, jobIds] of byReason) await deadLetters.park(jobIds, reason);
  return failed.length;
}

/**
 * Standard Webhooks secrets must be `whsec_<base64>`: a development value of another form (ensureDevSecrets
 * picks the form from the secret's name only) can be used by no sender and makes every delivery fail. Creates
 * the missing ones in that form, and replaces a `dev_` value this tool generated earlier. Returns their names.
 */
async function ensureStandardWebhooksSecrets(file: string, names: ReadonlySet<string>): Promise<string[]> {
  if (names.size === 0) return [];
  let values: Record<string, string> = {};
  try {
    values = JSON.parse(await readFile(file, 'utf8')) as Record<string, string>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const created = [...names].filter((name) => {
    const value = values[name];
    return typeof value !== 'string' || value === '' || value.startsWith('dev_');
  });
  if (created.length === 0) return [];
  for (const name of created) values[name] = `whsec_${randomBytes(24).toString('base64')}`;
  await writeJsonAtomic(file, values, 0o600);
  return created;
}
