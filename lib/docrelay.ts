/**
 * The DocRelay L3 construct: everything docrelay needs on AWS, from the one configuration the local stack
 * also runs, validated at synth. Resources can be brought or created; per-concern builders (lib/builders/)
 * create them, each function's grants beside its wiring.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Duration, RemovalPolicy, Stack, Stage } from 'aws-cdk-lib';
import type { HttpApi, HttpRoute, HttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import type { Rule } from 'aws-cdk-lib/aws-events';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { type LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { LAMBDA_ENV } from '../functions/config/lambda-env';
import { parseConfig } from '../functions/config/load';
import type { DocrelayConfig } from '../functions/config/schema';
import { buildHttpApi } from './builders/api';
import { buildEventRules, buildReconcileSchedule } from './builders/event-sources';
import {
  buildEventIngestFunction,
  buildIngestFunction,
  buildJobsApiFunction,
  buildReconcilerFunction,
  buildWorkerFunction,
  type FunctionOptions,
  type FunctionWiring,
} from './builders/functions';
import { type DeploymentIdentity, deploymentIdentity } from './builders/identity';
import { buildJobQueues, buildServiceDeadLetterQueue, THROTTLED_RECEIVE_HEADROOM } from './builders/queues';
import { buildConfigSecrets, buildSealingSecret, runtimeConfig } from './builders/secrets';
import { buildDocumentsBucket } from './builders/storage';
import { buildJobTable, JOB_TABLE_INDEXES } from './builders/table';
import type { DocRelayFunction, DocRelayFunctionOptions } from './docrelay-function';
import { DocRelayMonitoring } from './docrelay-monitoring';
import { DEFAULT_FUNCTION_SIZING, type DocRelayFunctionsSizing, type DocRelayProps } from './docrelay-props';

export { DEFAULT_THROTTLE } from './builders/api';
export { keyPatternPrefix } from './builders/functions';
export { configSecretNames, secretPolicyArn } from './builders/secrets';
export { JOB_TABLE_INDEXES, type JobTableIndexName } from './builders/table';
export * from './docrelay-props';

/** docrelay on AWS: HTTP API, functions, queue, table, bucket, secrets, events, alarms and dashboard. */
export class DocRelay extends Construct {
  /** The validated configuration (defaults filled) bundled with every function. */
  public readonly config: DocrelayConfig;
  /** The JSON file holding `config` (secrets by their physical names), copied into every function's asset as docrelay.config.json. */
  public readonly configFile: string;
  /** The documents bucket (given or created). */
  public readonly bucket: IBucket;
  /** The documents bucket's SSE-KMS key, when it has one (the created bucket's, or the one given with it). */
  public readonly bucketKey?: IKey;
  /** The server access logs bucket, when this construct created the documents bucket. */
  public readonly accessLogsBucket?: IBucket;
  /** The job and delivery table. */
  public readonly table: Table;
  /** The jobs queue. */
  public readonly queue: Queue;
  /** The jobs dead-letter queue (maxReceiveCount, and jobs the worker failed for good). */
  public readonly deadLetterQueue: Queue;
  /** Failed reconciler invocations, with their error (the ReconcilerErrors alarm fires too). */
  public readonly reconcilerFailureQueue: Queue;
  /** Events that could not become deliveries (only with EventBridge integrations). */
  public readonly eventsDeadLetterQueue?: Queue;
  /** The secret sealing payloads and links at rest. */
  public readonly sealingSecret: ISecret;
  /** The service API key's secret. */
  public readonly serviceApiKeySecret: ISecret;
  /** Every secret named in the config, by name. */
  public readonly configSecrets: ReadonlyMap<string, ISecret>;
  /** The name the functions look each config secret up by (prefixed when created here), by the config's name. */
  public readonly secretNames: ReadonlyMap<string, string>;
  /** This deployment's name, metric namespace and service names (derived from the stack unless given). */
  public readonly identity: DeploymentIdentity;
  /** The secrets this construct created (`createSecrets`), whose placeholder values must be replaced. */
  public readonly createdSecrets: readonly Secret[];
  /** `POST /v1/hooks/<id>` of every configured integration (any other method: 405). */
  public readonly ingestFunction: DocRelayFunction;
  /** The SQS worker. */
  public readonly workerFunction: DocRelayFunction;
  /** `GET /v1/jobs/{jobId}`. */
  public readonly jobsApiFunction: DocRelayFunction;
  /** EventBridge deliveries (only with EventBridge integrations). */
  public readonly eventIngestFunction?: DocRelayFunction;
  /** The scheduled reconciler. */
  public readonly reconcilerFunction: DocRelayFunction;
  /** The HTTP API. */
  public readonly api: HttpApi;
  /** Its `$default` stage (throttled, access-logged). */
  public readonly stage: HttpStage;
  /** The API's access logs. */
  public readonly accessLogGroup: LogGroup;
  /** The webhook routes, `ANY /v1/hooks/<id>`, one per integration that takes webhooks, by its id. */
  public readonly webhookRoutes: ReadonlyMap<string, HttpRoute>;
  /** The IAM-authorized jobs route. */
  public readonly jobsRoute: HttpRoute;
  /** One rule per integration with `eventBridge.eventPattern`, by integration id. */
  public readonly eventRules: ReadonlyMap<string, Rule>;
  /** The reconciler's schedule. */
  public readonly reconcileRule: Rule;
  /** Alarms and dashboard. */
  public readonly monitoring: DocRelayMonitoring;
  /** The bus docrelay publishes to (the default bus unless one was given). */
  public readonly eventBusArn: string;
  /** The API's base URL: the custom domain's, else e.g. `https://abc123.execute-api.eu-west-1.amazonaws.com`. */
  public readonly apiEndpoint: string;

  constructor(scope: Construct, id: string, props: DocRelayProps) {
    super(scope, id);
    // Validate (and compile every expression) here too, so a config built in code fails at synth, not in Lambda.
    this.config = parseConfig(JSON.stringify(props.config), props.configSource ?? 'config').config;
    this.identity = deploymentIdentity(this, props.deploymentName, props.secretPrefix);
    const settings = resolveSettings(props);
    const key = props.encryptionKey;
    const removalPolicy = settings.removalPolicy;

    ({
      bucket: this.bucket,
      accessLogsBucket: this.accessLogsBucket,
      encryptionKey: this.bucketKey,
    } = buildDocumentsBucket(this, {
      ...(props.bucket === undefined ? {} : { option: props.bucket }),
      ...(key === undefined ? {} : { encryptionKey: key }),
      removalPolicy,
    }));
    this.table = buildJobTable(this, {
      tableProps: props.tableProps ?? {},
      encryptionKey: key,
      removalPolicy,
      deletionProtection: props.deletionProtection ?? true,
      ...(props.omitTableIndexes === undefined ? {} : { omitIndexes: props.omitTableIndexes }),
    });
    // AWS's guidance for SQS event sources: at least six times the function timeout, so a message is not
    // redelivered while a throttled or retried invocation still holds it. It is also a job's lease.
    const visibilityTimeout = Duration.seconds(settings.sizing.worker.timeout.toSeconds() * 6);
    ({ queue: this.queue, deadLetterQueue: this.deadLetterQueue } = buildJobQueues(this, {
      visibilityTimeout,
      maxReceiveCount: settings.maxReceiveCount,
      queueProps: props.queueProps ?? {},
      deadLetterQueueProps: props.deadLetterQueueProps ?? {},
      ...(key === undefined ? {} : { encryptionKey: key }),
      removalPolicy,
    }));
    if (this.config.integrations.some((integration) => integration.eventBridge !== undefined)) {
      this.eventsDeadLetterQueue = buildServiceDeadLetterQueue(
        this,
        'EventsDeadLetters',
        'of the EventBridge rule targets and of the event-ingest function’s asynchronous invocations',
        removalPolicy,
      );
    }
    this.reconcilerFailureQueue = buildServiceDeadLetterQueue(
      this,
      'ReconcilerFailures',
      'of the reconciler’s failed scheduled invocations',
      removalPolicy,
    );
    this.sealingSecret = buildSealingSecret(this, {
      given: props.sealingSecret,
      encryptionKey: key,
      removalPolicy,
    });
    const secrets = buildConfigSecrets(this, {
      config: this.config,
      create: props.createSecrets === true,
      ...(props.secrets === undefined ? {} : { given: props.secrets }),
      physicalName: this.identity.secretName,
      ...(key === undefined ? {} : { encryptionKey: key }),
      removalPolicy,
    });
    this.configSecrets = secrets.byName;
    this.createdSecrets = secrets.created;
    this.serviceApiKeySecret = secrets.apiKey;
    this.secretNames = secrets.physicalNames;
    this.configFile = writeConfigFile(this, runtimeConfig(this.config, this.secretNames));

    this.eventBusArn =
      props.eventBus?.eventBusArn ??
      Stack.of(this).formatArn({ service: 'events', resource: 'event-bus', resourceName: 'default' });
    const wiring = this.functionWiring(props, settings, visibilityTimeout);
    const sizing = settings.sizing;
    this.ingestFunction = buildIngestFunction(wiring, sizing.ingest);
    this.workerFunction = buildWorkerFunction(wiring, sizing.worker, { batchSize: settings.batchSize });
    this.jobsApiFunction = buildJobsApiFunction(wiring, sizing.jobsApi);
    this.reconcilerFunction = buildReconcilerFunction(wiring, sizing.reconciler, this.reconcilerFailureQueue);
    if (this.eventsDeadLetterQueue !== undefined) {
      this.eventIngestFunction = buildEventIngestFunction(
        wiring,
        sizing.eventIngest,
        this.eventsDeadLetterQueue,
      );
    }

    const http = buildHttpApi(this, {
      apiName: this.identity.name,
      ingestFunction: this.ingestFunction,
      jobsApiFunction: this.jobsApiFunction,
      hooks: this.config.integrations
        .filter((integration) => integration.verify !== undefined)
        .map((integration) => ({
          id: integration.id,
          ...(integration.throttle === undefined ? {} : { throttle: integration.throttle }),
        })),
      ...(props.throttle === undefined ? {} : { throttle: props.throttle }),
      logRetention: settings.logRetention,
      logRemovalPolicy: removalPolicy,
      ...(props.apiProps === undefined ? {} : { apiProps: props.apiProps }),
      ...(props.domain === undefined ? {} : { domain: props.domain }),
    });
    ({ api: this.api, stage: this.stage, accessLogGroup: this.accessLogGroup } = http);
    ({ webhookRoutes: this.webhookRoutes, jobsRoute: this.jobsRoute } = http);
    this.apiEndpoint = http.endpoint;

    this.eventRules =
      this.eventIngestFunction === undefined || this.eventsDeadLetterQueue === undefined
        ? new Map()
        : buildEventRules(this, {
            config: this.config,
            eventIngestFunction: this.eventIngestFunction,
            deadLetterQueue: this.eventsDeadLetterQueue,
            ...(props.eventBus === undefined ? {} : { eventBus: props.eventBus }),
          });
    this.reconcileRule = buildReconcileSchedule(this, this.reconcilerFunction, settings.reconcileEvery);
    this.monitoring = this.buildMonitoring(props);
  }

  /** The URL a sender posts the integration's webhooks to. */
  public webhookUrl(integrationId: string): string {
    return `${this.apiEndpoint}/v1/hooks/${integrationId}`;
  }

  /**
   * Lets a principal read jobs: `GET /v1/jobs/{jobId}`, `GET /v1/jobs` and `GET /v1/deliveries/{deliveryId}`
   * (execute-api:Invoke on those routes only).
   */
  public grantReadJobs(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({
      grantee,
      actions: ['execute-api:Invoke'],
      resourceArns: ['/v1/jobs', '/v1/jobs/*', '/v1/deliveries/*'].map((path) =>
        this.api.arnForExecuteApi('GET', path, '$default'),
      ),
    });
  }

  /** What every function builder shares: the resources, their environment and the base's settings. */
  private functionWiring(
    props: DocRelayProps,
    settings: Settings,
    visibilityTimeout: Duration,
  ): FunctionWiring {
    return {
      scope: this,
      config: this.config,
      configSource: props.configSource ?? 'config',
      configFile: this.configFile,
      table: this.table,
      queue: this.queue,
      deadLetterQueue: this.deadLetterQueue,
      bucket: this.bucket,
      sealingSecret: this.sealingSecret,
      configSecrets: this.configSecrets,
      serviceApiKeySecret: this.serviceApiKeySecret,
      eventBusArn: this.eventBusArn,
      ...(props.encryptionKey === undefined ? {} : { dataKey: props.encryptionKey }),
      ...(this.bucketKey === undefined ? {} : { bucketKey: this.bucketKey }),
      environment: {
        [LAMBDA_ENV.tableName]: this.table.tableName,
        [LAMBDA_ENV.queueUrl]: this.queue.queueUrl,
        [LAMBDA_ENV.dlqUrl]: this.deadLetterQueue.queueUrl,
        [LAMBDA_ENV.bucket]: this.bucket.bucketName,
        // A full ARN when known; an imported secret by its name (a partial ARN would not resolve).
        [LAMBDA_ENV.sealingSecretName]: this.sealingSecret.secretFullArn ?? this.sealingSecret.secretName,
        [LAMBDA_ENV.maxReceiveCount]: String(settings.maxReceiveCount),
        [LAMBDA_ENV.deployment]: this.identity.name,
        [LAMBDA_ENV.leaseSeconds]: String(visibilityTimeout.toSeconds()),
        ...(props.eventBus === undefined ? {} : { [LAMBDA_ENV.eventBusName]: props.eventBus.eventBusArn }),
      },
      logRetention: settings.logRetention,
      logRemovalPolicy: settings.removalPolicy,
      identity: this.identity,
      ...(props.logLevel === undefined ? {} : { logLevel: props.logLevel }),
      tracing: props.tracing ?? false,
      sourceMaps: props.sourceMaps ?? false,
    };
  }

  private buildMonitoring(props: DocRelayProps): DocRelayMonitoring {
    return new DocRelayMonitoring(this, 'Monitoring', {
      metricsNamespace: this.identity.metricsNamespace,
      serviceNames: {
        ingest: this.identity.serviceName('ingest'),
        worker: this.identity.serviceName('worker'),
        reconciler: this.identity.serviceName('reconciler'),
        'event-ingest': this.identity.serviceName('event-ingest'),
      },
      api: this.api,
      ingestFunction: this.ingestFunction,
      workerFunction: this.workerFunction,
      jobsApiFunction: this.jobsApiFunction,
      reconcilerFunction: this.reconcilerFunction,
      ...(this.eventIngestFunction === undefined ? {} : { eventIngestFunction: this.eventIngestFunction }),
      table: this.table,
      tableIndexNames: JOB_TABLE_INDEXES.filter((name) => !props.omitTableIndexes?.includes(name)),
      accessLogGroup: this.accessLogGroup,
      queue: this.queue,
      deadLetterQueue: this.deadLetterQueue,
      ...(this.eventsDeadLetterQueue === undefined
        ? {}
        : { eventsDeadLetterQueue: this.eventsDeadLetterQueue }),
      ...(props.alarmTopic === undefined ? {} : { alarmTopic: props.alarmTopic }),
      ...(props.encryptionKey === undefined ? {} : { encryptionKey: props.encryptionKey }),
      ...(props.alarmThresholds === undefined ? {} : { thresholds: props.alarmThresholds }),
    });
  }
}

/** The props with their defaults filled and SQS's limits checked. */
interface Settings {
  readonly removalPolicy: RemovalPolicy;
  readonly logRetention: RetentionDays;
  readonly maxReceiveCount: number;
  readonly batchSize: number;
  readonly reconcileEvery: Duration;
  readonly sizing: Record<keyof DocRelayFunctionsSizing, FunctionOptions>;
}

/** Fills the defaults; a prop out of SQS's limits fails synth rather than the deployment. */
function resolveSettings(props: DocRelayProps): Settings {
  const maxReceiveCount = props.maxReceiveCount ?? 8;
  const batchSize = props.batchSize ?? 1;
  // SQS redrives at most at 1000 receives, and the throttled-receive headroom sits above the worker's cap.
  requireInteger('maxReceiveCount', maxReceiveCount, 1, 1000 - THROTTLED_RECEIVE_HEADROOM);
  // Up to 10: larger batches need a batching window, and the worker runs a batch one job after another.
  requireInteger('batchSize', batchSize, 1, 10);
  const sizing: Record<keyof DocRelayFunctionsSizing, FunctionOptions> = { ...DEFAULT_FUNCTION_SIZING };
  for (const [name, given] of Object.entries(props.functions ?? {}) as Array<
    [keyof DocRelayFunctionsSizing, DocRelayFunctionOptions]
  >) {
    sizing[name] = { ...sizing[name], ...given };
  }
  return {
    removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    logRetention: props.logRetention ?? RetentionDays.ONE_MONTH,
    maxReceiveCount,
    batchSize,
    reconcileEvery: props.reconcileEvery ?? Duration.minutes(5),
    sizing,
  };
}

/** Throws when a numeric prop is not a whole number within its limits. */
function requireInteger(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`DocRelay: ${name} must be a whole number from ${min} to ${max}, got ${value}`);
  }
}

/**
 * Writes the validated configuration as JSON into the cloud assembly's folder (named by its hash, so two
 * configurations never collide), from where it is copied into each function's asset.
 */
function writeConfigFile(scope: Construct, config: DocrelayConfig): string {
  const text = `${JSON.stringify(config, null, 2)}\n`;
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 16);
  const dir = Stage.of(scope)?.outdir ?? '.';
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `docrelay.config.${hash}.json`);
  writeFileSync(file, text);
  return file;
}
