/**
 * The local stack: docrelay whole on one machine, the handlers built as on AWS (functions/wiring/) with the
 * SDK clients on loopback emulators, an HTTP server for API Gateway, a poller for the SQS event source and
 * the reconciler on an interval. The AWS emulators, and with `docrelay dev` the workers, run as children.
 */
import { type AwsClients, createAwsClients } from '../../functions/adapters/aws-clients';
import { DynamoJobRepository } from '../../functions/adapters/dynamodb/job-table';
import { SqsJobQueue } from '../../functions/adapters/sqs/job-queue';
import { createObservability } from '../../functions/commons/observability';
import type { LoadedConfig } from '../../functions/config/compile';
import { loadConfigFile } from '../../functions/config/load';
import { reconcile, releaseAbandonedLeases } from '../../functions/core/reconcile';
import { DocgenClient } from '../../functions/docgen/client';
import { buildReconcilerDeps } from '../../functions/wiring/reconciler';
import type { EmulatorHandle } from '../emulator/server';
import { lockDataDir, writeEndpoints } from '../state-files';
import { type AwsEmulators, LOCAL_CREDENTIALS, startAwsEmulators } from './aws-emulators';
import { startAwsEmulatorsProcess } from './aws-emulators-process';
import { configReloader, templateChecker, watchFile } from './config-reload';
import { ensureConfigSecrets } from './config-secrets';
import { type FailedJobsTable, scanFailedJobs } from './failed-jobs';
import { wireIngest } from './ingest-wiring';
import type { LocalStack, LocalStackOptions } from './local-stack-types';
import { startStackApi } from './stack-api';
import { localSecrets, startWorkerSide, type WorkerSettings } from './workers';
import { startSupervisedWorkersProcess, type WorkersProcess } from './workers-process';

export { describeConfig } from './config-reload';
export type { LocalStack, LocalStackOptions, ReloadResult } from './local-stack-types';
export { LOCAL_SEALING_SECRET, trustedLinkLifetimeMs } from './workers';

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
    const aws = await startAws(options, { maxReceiveCount, visibilityTimeoutSeconds: visibility }, line);
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

    // Built before the workers: a restarted workers' process has the reconciler release what its predecessor held.
    const reconcilerLog = createObservability('reconciler', { logLevel }).logger;
    const reconcilerDeps = {
      ...buildReconcilerDeps({
        ...tables,
        sqs: clients.sqs,
        queueUrl: aws.queueUrl,
        leaseMs: visibility * 1000,
      }),
      ...(options.maxQueueWaitMs === undefined ? {} : { maxQueueWaitMs: options.maxQueueWaitMs }),
      log: reconcilerLog,
    };
    /** The configuration the handlers run (what a restarted workers' process starts with). */
    let running = config;
    const workerSettings = workerSettingsOf(options, aws, {
      maxReceiveCount,
      leaseMs: visibility * 1000,
      logLevel,
    });
    const workers: Workers =
      options.workers === 'child'
        ? await startSupervisedWorkersProcess({
            ...workerSettings,
            onLine: line,
            currentConfig: () => ({ config: running.config, source: running.source }),
            beforeResume: async () => {
              const released = await releaseAbandonedLeases(reconcilerDeps);
              if (released > 0) line(`jobs the dead workers' process held, sent again: ${released}`);
            },
          })
        : await startWorkersHere(workerSettings, config, clients, line);
    // The service emulator (or the workers' child) stops after the API, before the AWS emulators.
    stops.push(() => workers.stop());
    const docgenUrl = workers.docgenUrl;

    const ingestContext = { ...tables, sqs: clients.sqs, queueUrl: aws.queueUrl, logLevel };
    let wiring = wireIngest(ingestContext, config, secrets);
    const checkTemplates = templateChecker({
      enabled: options.checkTemplates !== false,
      configPath: settings.configPath,
      docgenUrl,
      line,
      client: new DocgenClient({
        baseUrl: docgenUrl,
        apiKey: { get: () => secrets.get(config.config.service.apiKeySecret) },
        downloadOrigins: config.config.service.downloadOrigins ?? [],
      }),
    });
    const api = await startStackApi({
      wiring: () => wiring,
      config,
      secrets,
      aws,
      clients,
      jobs,
      queue,
      docgenUrl,
      workersAlive: () => workers.alive,
      logLevel,
      port: settings.port,
      line,
    });
    stops.push(() => api.close());

    // Stopped first (after the reconciler): batches in flight finish while the API and the emulators run. The
    // queue goes with the stack, so the receives waiting in their long poll end at once.
    stops.push(() => workers.stopWorkers({ abortReceives: true }));

    const reconcileNow = (before?: number) => reconcile(reconcilerDeps, before);
    await resumeOpenJobs(reconcileNow, tables, deadLetters, settings.dataDir, line);
    stops.push(reconcileEvery(options.reconcileIntervalMs ?? 30_000, reconcileNow, line));

    if (options.startWorkers ?? true) workers.startWorkers();
    await checkTemplates(config);

    const reloadConfig = configReloader({
      configPath: settings.configPath,
      secretsFile: settings.secretsFile,
      line,
      useInWorkers: (loaded) => workers.useConfig(loaded),
      apply: (loaded) => {
        // A new secret source: the new config may name secrets the old one's cache has not seen.
        wiring = wireIngest(ingestContext, loaded, localSecrets(settings, loaded));
        running = loaded;
      },
      checkTemplates,
    });
    if (options.watchConfig === true) stops.push(watchFile(settings.configPath, () => void reloadConfig()));

    await writeStackEndpoints(settings.dataDir, api.url, docgenUrl, aws);

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

/** Starts the AWS emulators (DynamoDB, S3, SQS) in a child process of their own, or in this one. */
async function startAws(
  options: LocalStackOptions,
  queue: { maxReceiveCount: number; visibilityTimeoutSeconds: number },
  line: (text: string) => void,
): Promise<AwsEmulators> {
  const awsOptions = { dataDir: options.settings.dataDir, ...queue };
  if (options.awsEmulators === 'in-process') return startAwsEmulators(awsOptions);
  return startAwsEmulatorsProcess({
    ...awsOptions,
    onExit: (reason) => (options.onFatal ?? ((why) => line(`error: ${why}`)))(reason),
  });
}

/** The worker side's settings: where the emulators are and the options that reach the workers. */
function workerSettingsOf(
  options: LocalStackOptions,
  aws: AwsEmulators,
  fixed: Pick<WorkerSettings, 'maxReceiveCount' | 'leaseMs' | 'logLevel'>,
): WorkerSettings {
  const given = <K extends keyof WorkerSettings & keyof LocalStackOptions>(key: K) =>
    options[key] === undefined ? {} : { [key]: options[key] };
  return {
    settings: options.settings,
    aws: {
      region: aws.region,
      endpoints: aws.endpoints,
      tableName: aws.tableName,
      bucket: aws.bucket,
      queueUrl: aws.queueUrl,
      dlqUrl: aws.dlqUrl,
    },
    ...fixed,
    ...given('emulator'),
    ...given('linkLifetimeMs'),
    ...given('retryBaseSeconds'),
    ...given('outageBudgetMs'),
    ...given('docgenRetryBudgetMs'),
    ...given('concurrency'),
  };
}

/** The worker lanes and the service emulator in this process: they live as long as the stack does. */
async function startWorkersHere(
  workerSettings: WorkerSettings,
  config: LoadedConfig,
  clients: AwsClients,
  line: (text: string) => void,
): Promise<Workers> {
  const side = await startWorkerSide({ ...workerSettings, config, clients, onLine: line });
  return { ...side, alive: true, useConfig: async (loaded) => side.useConfig(loaded) };
}

/** Runs the reconciler every `intervalMs` (not keeping the process alive); returns the stop function. */
function reconcileEvery(
  intervalMs: number,
  reconcileNow: () => Promise<unknown>,
  line: (text: string) => void,
): () => Promise<void> {
  const interval = setInterval(() => {
    reconcileNow().catch((error: unknown) =>
      line(`reconciler error: ${error instanceof Error ? error.message : String(error)}`),
    );
  }, intervalMs);
  interval.unref();
  return async () => clearInterval(interval);
}

/** Writes where the stack's endpoints are (the CLI's commands read them). */
async function writeStackEndpoints(
  dataDir: string,
  api: string,
  docgenUrl: string,
  aws: AwsEmulators,
): Promise<void> {
  await writeEndpoints(dataDir, {
    api,
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
}

/**
 * The queue emulator keeps messages in memory only: at start-up every open job needs its message again, and
 * every failed job its place in the dead-letter queue (as on AWS, where that queue is durable).
 */
async function resumeOpenJobs(
  reconcileNow: LocalStack['reconcileNow'],
  tables: FailedJobsTable,
  deadLetters: SqsJobQueue,
  dataDir: string,
  line: (text: string) => void,
): Promise<void> {
  const resumed = await reconcileNow(Number.MAX_SAFE_INTEGER);
  if (resumed.jobsResent + resumed.deliveriesCompleted > 0) {
    line(
      `resumed ${resumed.jobsResent} open jobs and ${resumed.deliveriesCompleted} deliveries from ${dataDir}`,
    );
  }
  const parked = await parkFailedJobs(tables, deadLetters);
  if (parked > 0) line(`parked ${parked} failed jobs in the dead-letter queue again`);
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
