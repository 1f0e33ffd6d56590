/**
 * The DocRelay L3 construct: everything docrelay needs on AWS, from one validated configuration. The same
 * YAML file runs the local stack (`npm start`); here it is validated at synth and copied into every function's
 * asset. Resources can be brought (bucket, key, event bus, alarm topic, sealing secret) or created.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Annotations, Duration, RemovalPolicy, Stack, Stage, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  HttpApi,
  type HttpApiProps,
  HttpMethod,
  type HttpRoute,
  type HttpStage,
  LogGroupLogDestination,
  type ThrottleSettings,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpIamAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import {
  AttributeType,
  BillingMode,
  ProjectionType,
  Table,
  TableEncryption,
  type TableProps,
} from 'aws-cdk-lib/aws-dynamodb';
import {
  EventField,
  type EventPattern,
  type IEventBus,
  Rule,
  RuleTargetInput,
  Schedule,
} from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Grant, type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { IDestination } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type BucketProps,
  type IBucket,
  type LifecycleRule,
} from 'aws-cdk-lib/aws-s3';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption, type QueueProps } from 'aws-cdk-lib/aws-sqs';
import { flattenCfnReference } from 'cdk-nag/lib/utils/flatten-cfn-reference';
import { Construct } from 'constructs';
import { LAMBDA_ENV } from '../functions/config/lambda-env';
import { parseConfig } from '../functions/config/load';
import type { DocrelayConfig, DocrelayConfigInput } from '../functions/config/schema';
import { JOB_TABLE } from '../functions/config/table-contract';
import {
  DocRelayFunction,
  type DocRelayFunctionName,
  type DocRelayFunctionProps,
  type FunctionSizing,
} from './docrelay-function';
import { type DocRelayAlarmThresholds, DocRelayMonitoring } from './docrelay-monitoring';

/** Settings for a bucket the construct creates. */
export interface DocRelayNewBucketProps {
  /**
   * Lifecycle rules of the documents bucket.
   * @default abort incomplete multipart uploads after 1 day; delete noncurrent versions after 30 days
   */
  readonly lifecycleRules?: LifecycleRule[];
  /** Bucket for the server access logs. @default a new bucket (SSE-S3, logs expire after 365 days) */
  readonly accessLogsBucket?: IBucket;
  /** Key prefix of the server access logs. @default 'documents/' */
  readonly accessLogsPrefix?: string;
  /**
   * Escape hatch for other bucket settings; the security settings (block public access, SSL, encryption,
   * versioning, access logs) are applied over it and cannot be passed.
   */
  readonly bucketProps?: Omit<
    BucketProps,
    | 'blockPublicAccess'
    | 'enforceSSL'
    | 'encryption'
    | 'encryptionKey'
    | 'versioned'
    | 'publicReadAccess'
    | 'serverAccessLogsBucket'
    | 'serverAccessLogsPrefix'
    | 'lifecycleRules'
    | 'bucketName'
  >;
}

/** Where documents are stored: an existing bucket, or settings for one the construct creates. */
export type DocRelayBucketOption =
  | {
      /** A bucket you manage (its encryption, logging and lifecycle are yours). */
      readonly existing: IBucket;
      readonly create?: never;
    }
  | {
      readonly existing?: never;
      /** Settings of the created bucket. @default see DocRelayNewBucketProps */
      readonly create?: DocRelayNewBucketProps;
    };

/** Sizing of docrelay's functions (docs/deploy.md, "Memory and timeouts", says why these defaults). */
export interface DocRelayFunctionsSizing {
  /** @default 512 MB, 10 s */
  readonly ingest?: FunctionSizing;
  /** @default 1024 MB, 300 s */
  readonly worker?: FunctionSizing;
  /** @default 256 MB, 10 s */
  readonly jobsApi?: FunctionSizing;
  /** @default 256 MB, 30 s */
  readonly eventIngest?: FunctionSizing;
  /** @default 256 MB, 60 s */
  readonly reconciler?: FunctionSizing;
}

/** Props of the DocRelay construct. */
export interface DocRelayProps {
  /** The configuration (the YAML file's content, e.g. `loadConfigFileSync(path).config`); validated again here. */
  readonly config: DocrelayConfigInput;
  /** Name of the configuration in error messages. @default 'config' */
  readonly configSource?: string;
  /** The documents bucket. @default a new bucket with the defaults of DocRelayNewBucketProps */
  readonly bucket?: DocRelayBucketOption;
  /**
   * Customer managed key for the created bucket, table, queues, sealing secret, secrets and alarm topic.
   * @default AWS managed encryption: SSE-S3, SQS-managed SSE, DynamoDB's AWS owned key, aws/secretsmanager
   */
  readonly encryptionKey?: IKey;
  /**
   * Bus for `Document Stored`/`Document Failed` events and for the integrations' event rules.
   * @default the account's default bus
   */
  readonly eventBus?: IEventBus;
  /** SNS topic the alarms notify. @default a new topic */
  readonly alarmTopic?: ITopic;
  /** Alarm thresholds. @default see DocRelayAlarmThresholds */
  readonly alarmThresholds?: DocRelayAlarmThresholds;
  /**
   * Create the service API key and webhook secrets named in the config (with a random placeholder value to be
   * replaced, see the stack outputs) instead of importing existing secrets by name.
   * @default false
   */
  readonly createSecrets?: boolean;
  /** The secret that seals payloads and links at rest. @default a new secret with a generated random value */
  readonly sealingSecret?: ISecret;
  /** Receives of a job message before it goes to the dead-letter queue. @default 8 */
  readonly maxReceiveCount?: number;
  /** Messages per worker invocation (processed one after another). @default 1 */
  readonly batchSize?: number;
  /** Throttling of the HTTP API's stage. @default rateLimit 50 requests/s, burstLimit 100 */
  readonly throttle?: ThrottleSettings;
  /** Memory and timeout per function. @default see DocRelayFunctionsSizing */
  readonly functions?: DocRelayFunctionsSizing;
  /** Retention of the functions' logs and the API access logs. @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /** Powertools log level of every function. @default 'INFO' */
  readonly logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /** How often the reconciler re-sends stranded jobs. @default Duration.minutes(5) */
  readonly reconcileEvery?: Duration;
  /** What happens to the table, created bucket and created secrets when the stack is deleted. @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
  /** Escape hatch for the job table; the key schema, billing, PITR, TTL and encryption are applied over it. */
  readonly tableProps?: Omit<
    TableProps,
    | 'partitionKey'
    | 'sortKey'
    | 'billingMode'
    | 'pointInTimeRecovery'
    | 'pointInTimeRecoverySpecification'
    | 'timeToLiveAttribute'
    | 'encryption'
    | 'encryptionKey'
    | 'tableName'
    | 'removalPolicy'
  >;
  /** Escape hatch for the jobs queue; visibility timeout, dead-letter queue and encryption are applied over it. */
  readonly queueProps?: Omit<
    QueueProps,
    | 'visibilityTimeout'
    | 'deadLetterQueue'
    | 'encryption'
    | 'encryptionMasterKey'
    | 'enforceSSL'
    | 'queueName'
    | 'fifo'
  >;
  /** Escape hatch for the HTTP API; stage, routes and authorizers are the construct's. */
  readonly apiProps?: Pick<HttpApiProps, 'description' | 'disableExecuteApiEndpoint' | 'corsPreflight'>;
}

/** Defaults of the function sizes (docs/deploy.md explains them). */
export const DEFAULT_FUNCTION_SIZING: Readonly<
  Record<keyof DocRelayFunctionsSizing, Required<FunctionSizing>>
> = {
  // Latency-bound (senders time out after ~10 s): CPU scales with memory, so cold starts and HMACs are faster.
  ingest: { memorySize: 512, timeout: Duration.seconds(10) },
  // Streams files (8 MB parts, 4 in flight: memory does not grow with file size); the extra memory buys
  // CPU for TLS and SHA-256 and network bandwidth. 300 s covers a slow generation plus a large copy.
  worker: { memorySize: 1024, timeout: Duration.seconds(300) },
  jobsApi: { memorySize: 256, timeout: Duration.seconds(10) },
  eventIngest: { memorySize: 256, timeout: Duration.seconds(30) },
  // One bounded pass (at most 500 items) per tick.
  reconciler: { memorySize: 256, timeout: Duration.seconds(60) },
};

/** The default API throttling. */
export const DEFAULT_THROTTLE: Required<ThrottleSettings> = { rateLimit: 50, burstLimit: 100 };

/** SQS allows event-source maximum concurrency from 2; 1 is done with reserved concurrency instead. */
const MIN_ESM_MAX_CONCURRENCY = 2;

/** The literal start of a key pattern (before its first placeholder), to scope S3 permissions. */
export function keyPatternPrefix(keyPattern: string): string {
  const literal = keyPattern.split('{', 1)[0] ?? '';
  // Only whole path segments: `docs/{x}` scopes to `docs/`, `doc{x}` to nothing finer than the bucket.
  return literal.includes('/') ? literal.slice(0, literal.lastIndexOf('/') + 1) : '';
}

/** Secret names the configuration reads at run time: the service API key and every webhook secret. */
export function configSecretNames(config: DocrelayConfig): {
  apiKey: string;
  webhook: Map<string, string[]>;
} {
  const webhook = new Map<string, string[]>();
  for (const integration of config.integrations) {
    const secret = integration.verify?.secret;
    webhook.set(integration.id, secret === undefined ? [] : Array.isArray(secret) ? [...secret] : [secret]);
  }
  return { apiKey: config.service.apiKeySecret, webhook };
}

/** docrelay on AWS: HTTP API, functions, queue, table, bucket, secrets, events, alarms and dashboard. */
export class DocRelay extends Construct {
  /** The validated configuration (defaults filled) bundled with every function. */
  public readonly config: DocrelayConfig;
  /** The JSON file holding `config`, copied into every function's asset as docrelay.config.json. */
  public readonly configFile: string;
  /** The documents bucket (given or created). */
  public readonly bucket: IBucket;
  /** The server access logs bucket, when this construct created the documents bucket. */
  public readonly accessLogsBucket?: IBucket;
  /** The job and delivery table. */
  public readonly table: Table;
  /** The jobs queue. */
  public readonly queue: Queue;
  /** The jobs dead-letter queue (maxReceiveCount, and jobs the worker failed for good). */
  public readonly deadLetterQueue: Queue;
  /** Events that could not become deliveries (only with EventBridge integrations). */
  public readonly eventsDeadLetterQueue?: Queue;
  /** The secret sealing payloads and links at rest. */
  public readonly sealingSecret: ISecret;
  /** The service API key's secret. */
  public readonly serviceApiKeySecret: ISecret;
  /** Every secret named in the config, by name. */
  public readonly configSecrets: ReadonlyMap<string, ISecret>;
  /** The secrets this construct created (`createSecrets`), whose placeholder values must be replaced. */
  public readonly createdSecrets: readonly Secret[];
  /** `POST /v1/hooks/{integrationId}` (any other method: 405). */
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
  /** The webhook route. */
  public readonly webhookRoute: HttpRoute;
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
  /** The API's base URL, e.g. `https://abc123.execute-api.eu-west-1.amazonaws.com`. */
  public readonly apiEndpoint: string;

  private readonly encryptionKey?: IKey;

  constructor(scope: Construct, id: string, props: DocRelayProps) {
    super(scope, id);
    const source = props.configSource ?? 'config';
    // Validate (and compile every expression) here too, so a config built in code fails at synth, not in Lambda.
    this.config = parseConfig(JSON.stringify(props.config), source).config;
    const configFile = writeConfigFile(this, this.config);
    this.configFile = configFile;
    this.encryptionKey = props.encryptionKey;
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const logRetention = props.logRetention ?? RetentionDays.ONE_MONTH;
    const maxReceiveCount = props.maxReceiveCount ?? 8;
    const batchSize = props.batchSize ?? 1;
    // SQS's limits, checked here so a wrong prop fails synth rather than the deployment.
    requireInteger('maxReceiveCount', maxReceiveCount, 1, 1000);
    // Up to 10: larger batches need a batching window, and the worker runs a batch one job after another.
    requireInteger('batchSize', batchSize, 1, 10);
    const sizing = { ...DEFAULT_FUNCTION_SIZING };
    for (const [name, given] of Object.entries(props.functions ?? {}) as Array<
      [keyof DocRelayFunctionsSizing, FunctionSizing]
    >) {
      sizing[name] = { ...sizing[name], ...given };
    }
    const eventIntegrations = this.config.integrations.filter((i) => i.eventBridge !== undefined);

    // --- storage --------------------------------------------------------------------------------------------
    if (props.bucket?.existing !== undefined) {
      this.bucket = props.bucket.existing;
    } else {
      const create = props.bucket?.create ?? {};
      this.accessLogsBucket = create.accessLogsBucket ?? this.createAccessLogsBucket(removalPolicy);
      this.bucket = new Bucket(this, 'Documents', {
        ...create.bucketProps,
        blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
        enforceSSL: true,
        versioned: true,
        ...(props.encryptionKey === undefined
          ? { encryption: BucketEncryption.S3_MANAGED }
          : { encryption: BucketEncryption.KMS, encryptionKey: props.encryptionKey, bucketKeyEnabled: true }),
        serverAccessLogsBucket: this.accessLogsBucket,
        serverAccessLogsPrefix: create.accessLogsPrefix ?? 'documents/',
        lifecycleRules: create.lifecycleRules ?? [
          { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
          { id: 'expire-noncurrent-versions', noncurrentVersionExpiration: Duration.days(30) },
        ],
        removalPolicy,
      });
    }

    this.table = new Table(this, 'Jobs', {
      ...props.tableProps,
      partitionKey: { name: JOB_TABLE.partitionKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: JOB_TABLE.ttlAttribute,
      ...(props.encryptionKey === undefined
        ? {}
        : { encryption: TableEncryption.CUSTOMER_MANAGED, encryptionKey: props.encryptionKey }),
      removalPolicy,
    });
    this.table.addGlobalSecondaryIndex({
      indexName: JOB_TABLE.openJobsIndex,
      partitionKey: { name: JOB_TABLE.openPartitionKey, type: AttributeType.STRING },
      sortKey: { name: JOB_TABLE.openSortKey, type: AttributeType.NUMBER },
      projectionType: ProjectionType.ALL,
    });

    // --- queues ---------------------------------------------------------------------------------------------
    const workerTimeout = sizing.worker.timeout;
    // AWS's guidance for SQS event sources: at least six times the function timeout, so a message is not
    // redelivered while a throttled or retried invocation still holds it. It is also a job's lease.
    const visibilityTimeout = Duration.seconds(workerTimeout.toSeconds() * 6);
    const queueEncryption =
      props.encryptionKey === undefined
        ? { encryption: QueueEncryption.SQS_MANAGED }
        : { encryption: QueueEncryption.KMS, encryptionMasterKey: props.encryptionKey };
    this.deadLetterQueue = new Queue(this, 'JobsDeadLetters', {
      ...queueEncryption,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new Queue(this, 'JobsQueue', {
      ...props.queueProps,
      ...queueEncryption,
      enforceSSL: true,
      visibilityTimeout,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount },
    });
    if (eventIntegrations.length > 0) {
      // SQS-managed SSE even with a customer key: EventBridge and Lambda's async destination write here, and a
      // customer key would need their service principals in its policy. It holds events already on the bus.
      this.eventsDeadLetterQueue = new Queue(this, 'EventsDeadLetters', {
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: Duration.days(14),
      });
      Validations.of(this.eventsDeadLetterQueue).acknowledge({
        id: 'AwsSolutions-SQS3',
        reason:
          'This queue is itself a dead-letter queue: of the EventBridge rule targets and of the event-ingest function’s asynchronous invocations.',
      });
    }

    // --- secrets --------------------------------------------------------------------------------------------
    this.sealingSecret =
      props.sealingSecret ??
      new Secret(this, 'SealingSecret', {
        description:
          'docrelay: key that seals webhook payloads and download links at rest (generated, never shown)',
        generateSecretString: { passwordLength: 64, excludePunctuation: true },
        ...(props.encryptionKey === undefined ? {} : { encryptionKey: props.encryptionKey }),
        // Sealed payloads in a retained table are unreadable without it.
        removalPolicy,
      });
    if (props.sealingSecret === undefined) {
      Validations.of(this.sealingSecret).acknowledge({
        id: 'AwsSolutions-SMG4',
        reason:
          'Rotating the sealing key would make payloads and links sealed under the old value (jobs in flight) unreadable; it never leaves AWS and is readable only by the docrelay functions that seal or unseal.',
      });
    }
    const names = configSecretNames(this.config);
    const created: Secret[] = [];
    const secrets = new Map<string, ISecret>();
    const secretsScope = new Construct(this, 'ConfigSecrets');
    for (const name of new Set([names.apiKey, ...[...names.webhook.values()].flat()])) {
      const id = encodeURIComponent(name);
      if (props.createSecrets === true) {
        const secret = new Secret(secretsScope, id, {
          // The runtime looks secrets up by the names in the config, so this physical name is the config's.
          secretName: name,
          description: `docrelay: ${name === names.apiKey ? 'Document Generation Service API key' : 'webhook signing secret'}; replace the random placeholder with the real value`,
          // A random placeholder, never a guessable one: until it is set, nothing can sign a valid webhook.
          generateSecretString: { passwordLength: 48, excludePunctuation: true },
          ...(props.encryptionKey === undefined ? {} : { encryptionKey: props.encryptionKey }),
          removalPolicy,
        });
        Validations.of(secret).acknowledge({
          id: 'AwsSolutions-SMG4',
          reason:
            'The value is issued by a third party (the Document Generation Service or the webhook sender), so Secrets Manager cannot rotate it; it is rotated with put-secret-value, and docrelay accepts several webhook secret names for an overlap (docs/deploy.md, "Key rotation").',
        });
        created.push(secret);
        secrets.set(name, secret);
      } else {
        secrets.set(name, Secret.fromSecretNameV2(secretsScope, id, name));
      }
    }
    this.configSecrets = secrets;
    this.createdSecrets = created;
    this.serviceApiKeySecret = secrets.get(names.apiKey)!;

    // --- functions ------------------------------------------------------------------------------------------
    this.eventBusArn =
      props.eventBus?.eventBusArn ??
      Stack.of(this).formatArn({ service: 'events', resource: 'event-bus', resourceName: 'default' });
    const environment: Record<string, string> = {
      [LAMBDA_ENV.tableName]: this.table.tableName,
      [LAMBDA_ENV.queueUrl]: this.queue.queueUrl,
      [LAMBDA_ENV.dlqUrl]: this.deadLetterQueue.queueUrl,
      [LAMBDA_ENV.bucket]: this.bucket.bucketName,
      // A full ARN when known; an imported secret by its name (a partial ARN would not resolve).
      [LAMBDA_ENV.sealingSecretName]: this.sealingSecret.secretFullArn ?? this.sealingSecret.secretName,
      [LAMBDA_ENV.maxReceiveCount]: String(maxReceiveCount),
      [LAMBDA_ENV.leaseSeconds]: String(visibilityTimeout.toSeconds()),
      ...(props.eventBus === undefined ? {} : { [LAMBDA_ENV.eventBusName]: props.eventBus.eventBusArn }),
    };
    const fn = (
      constructId: string,
      name: DocRelayFunctionName,
      size: Required<FunctionSizing>,
      description: string,
      extra: Pick<DocRelayFunctionProps, 'functionProps'> = {},
    ): DocRelayFunction =>
      new DocRelayFunction(this, constructId, {
        name,
        configFile,
        description,
        memorySize: size.memorySize,
        timeout: size.timeout,
        environment,
        logRetention,
        ...(props.logLevel === undefined ? {} : { logLevel: props.logLevel }),
        ...extra,
      });

    this.ingestFunction = fn(
      'Ingest',
      'ingest',
      sizing.ingest,
      'docrelay: verifies webhooks and queues their jobs',
    );
    const maxConcurrency = this.config.service.maxConcurrency;
    this.workerFunction = fn(
      'Worker',
      'worker',
      sizing.worker,
      'docrelay: generates documents and stores them in S3',
      {
        // SQS event sources cap concurrency from 2 up; a cap of 1 is a reserved concurrency of 1.
        ...(maxConcurrency < MIN_ESM_MAX_CONCURRENCY
          ? { functionProps: { reservedConcurrentExecutions: 1 } }
          : {}),
      },
    );
    this.workerFunction.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize,
        reportBatchItemFailures: true,
        // The worker runs one generation at a time per invocation, so this caps generations in flight.
        ...(maxConcurrency >= MIN_ESM_MAX_CONCURRENCY ? { maxConcurrency } : {}),
      }),
    );
    if (this.config.service.timeoutSeconds * 2 > workerTimeout.toSeconds()) {
      Annotations.of(this).addWarningV2(
        'docrelay:workerTimeout',
        `the worker timeout (${workerTimeout.toSeconds()} s) leaves little room for service.timeoutSeconds (${this.config.service.timeoutSeconds} s) and a retry; raise functions.worker.timeout`,
      );
    }
    this.jobsApiFunction = fn('JobsApi', 'jobs-api', sizing.jobsApi, 'docrelay: GET /v1/jobs/{jobId}');
    this.reconcilerFunction = fn(
      'Reconciler',
      'reconciler',
      sizing.reconciler,
      'docrelay: re-sends stranded jobs',
      {
        // The next tick retries; a failed pass need not be retried asynchronously.
        functionProps: { retryAttempts: 0 },
      },
    );
    if (this.eventsDeadLetterQueue !== undefined) {
      this.eventIngestFunction = fn(
        'EventIngest',
        'event-ingest',
        sizing.eventIngest,
        'docrelay: turns matching EventBridge events into deliveries',
        {
          functionProps: {
            retryAttempts: 2,
            maxEventAge: Duration.hours(6),
            // After Lambda's own retries the event lands here, with the error, for a person to look at.
            onFailure: sendOnlyQueueDestination(this.eventsDeadLetterQueue),
          },
        },
      );
    }

    this.grantPermissions();

    // --- HTTP API -------------------------------------------------------------------------------------------
    this.api = new HttpApi(this, 'Api', {
      description: 'docrelay: webhooks in, documents in S3',
      ...props.apiProps,
      // The stage is created below, with throttling and access logs.
      createDefaultStage: false,
    });
    this.accessLogGroup = new LogGroup(this, 'ApiAccessLogs', { retention: logRetention });
    this.stage = this.api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: {
        rateLimit: props.throttle?.rateLimit ?? DEFAULT_THROTTLE.rateLimit,
        burstLimit: props.throttle?.burstLimit ?? DEFAULT_THROTTLE.burstLimit,
      },
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogGroup),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            ip: '$context.identity.sourceIp',
            requestTime: '$context.requestTime',
            method: '$context.httpMethod',
            routeKey: '$context.routeKey',
            path: '$context.path',
            status: '$context.status',
            responseLength: '$context.responseLength',
            latency: '$context.responseLatency',
            integrationStatus: '$context.integrationStatus',
            integrationError: '$context.integrationErrorMessage',
            caller: '$context.identity.userArn',
          }),
        ),
      },
    });
    this.apiEndpoint = this.api.apiEndpoint;
    // Every method reaches the ingest, which answers anything but POST with a 405 problem, as the local API
    // does (API Gateway's own answer for a method without a route would be a bare 404).
    [this.webhookRoute] = this.api.addRoutes({
      path: '/v1/hooks/{integrationId}',
      methods: [HttpMethod.ANY],
      integration: new HttpLambdaIntegration('IngestIntegration', this.ingestFunction),
    }) as [HttpRoute];
    [this.jobsRoute] = this.api.addRoutes({
      path: '/v1/jobs/{jobId}',
      methods: [HttpMethod.GET],
      integration: new HttpLambdaIntegration('JobsIntegration', this.jobsApiFunction),
      authorizer: new HttpIamAuthorizer(),
    }) as [HttpRoute];
    Validations.of(this.webhookRoute).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Webhook senders (GitHub, Stripe, …) cannot sign with IAM or obtain tokens: each delivery is authenticated by its HMAC/ed25519 signature over the raw body, verified with a constant-time comparison in the ingest function before anything else; unknown integrations answer 404. The stage is throttled.',
    });

    // --- EventBridge ----------------------------------------------------------------------------------------
    const rules = new Map<string, Rule>();
    for (const integration of eventIntegrations) {
      const rule = new Rule(this, `EventRule-${integration.id}`, {
        description: `docrelay: events that become deliveries of integration ${integration.id}`,
        ...(props.eventBus === undefined ? {} : { eventBus: props.eventBus }),
        // The config's pattern is EventBridge's own JSON (e.g. detail-type), passed through as written.
        eventPattern: integration.eventBridge?.eventPattern as EventPattern,
      });
      rule.addTarget(
        new LambdaFunction(this.eventIngestFunction!, {
          event: RuleTargetInput.fromObject({
            integrationId: integration.id,
            event: EventField.fromPath('$'),
          }),
          deadLetterQueue: this.eventsDeadLetterQueue,
          retryAttempts: 8,
          maxEventAge: Duration.hours(24),
        }),
      );
      rules.set(integration.id, rule);
    }
    this.eventRules = rules;
    this.reconcileRule = new Rule(this, 'ReconcileSchedule', {
      description: 'docrelay: re-sends jobs whose message was lost or whose worker died',
      schedule: Schedule.rate(props.reconcileEvery ?? Duration.minutes(5)),
      targets: [new LambdaFunction(this.reconcilerFunction, { retryAttempts: 0 })],
    });

    // --- monitoring -----------------------------------------------------------------------------------------
    this.monitoring = new DocRelayMonitoring(this, 'Monitoring', {
      api: this.api,
      ingestFunction: this.ingestFunction,
      workerFunction: this.workerFunction,
      jobsApiFunction: this.jobsApiFunction,
      reconcilerFunction: this.reconcilerFunction,
      ...(this.eventIngestFunction === undefined ? {} : { eventIngestFunction: this.eventIngestFunction }),
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

  /** The URL a sender posts the integration's webhooks to. */
  public webhookUrl(integrationId: string): string {
    return `${this.apiEndpoint}/v1/hooks/${integrationId}`;
  }

  /** Lets a principal call `GET /v1/jobs/{jobId}` (execute-api:Invoke on that route only). */
  public grantReadJobs(grantee: IGrantable): Grant {
    return Grant.addToPrincipal({
      grantee,
      actions: ['execute-api:Invoke'],
      resourceArns: [this.api.arnForExecuteApi('GET', '/v1/jobs/*', '$default')],
    });
  }

  private createAccessLogsBucket(removalPolicy: RemovalPolicy): Bucket {
    const logs = new Bucket(this, 'AccessLogs', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      // S3 server access logging delivers only to SSE-S3 buckets.
      encryption: BucketEncryption.S3_MANAGED,
      lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(365) }],
      removalPolicy,
    });
    // cdk-nag's S1 recognises a bucket that receives access logs, so this one needs no waiver.
    return logs;
  }

  /** Each function gets only the actions it uses, on only the resources it uses. */
  private grantPermissions(): void {
    const table = this.table.tableArn;
    const openIndex = `${table}/index/${JOB_TABLE.openJobsIndex}`;
    const prefix = keyPatternPrefix(this.config.storage.keyPattern);
    const objects = this.bucket.arnForObjects(`${prefix}*`);
    const allow = (target: DocRelayFunction, actions: string[], resources: string[]): void => {
      target.addToRolePolicy(new PolicyStatement({ actions, resources }));
    };
    const secretArns = (names: readonly string[]): string[] =>
      [...new Set(names)].map((name) => secretPolicyArn(this.configSecrets.get(name)!));
    const names = configSecretNames(this.config);

    // ingest: record the delivery and its jobs (conditional puts, read on conflict, mark enqueued), send the
    // job messages, read the webhook secrets and the sealing secret.
    allow(this.ingestFunction, ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem'], [table]);
    allow(this.ingestFunction, ['sqs:SendMessage'], [this.queue.queueArn]);
    const webhookSecrets = secretArns([...names.webhook.values()].flat());
    allow(
      this.ingestFunction,
      ['secretsmanager:GetSecretValue'],
      [...webhookSecrets, secretPolicyArn(this.sealingSecret)],
    );

    // worker: the job state machine (read, conditional update), the delivery's payload, the copy to S3
    // (lib-storage: PutObject covers the multipart calls; AbortMultipartUpload cleans up), dead letters, a
    // fresh delayed message for a job outlasting a service outage, retry deferral (ChangeMessageVisibility is
    // part of the event source's grant), events, secrets.
    allow(this.workerFunction, ['dynamodb:GetItem', 'dynamodb:UpdateItem'], [table]);
    allow(this.workerFunction, ['s3:PutObject', 's3:AbortMultipartUpload'], [objects]);
    allow(this.workerFunction, ['sqs:SendMessage'], [this.queue.queueArn, this.deadLetterQueue.queueArn]);
    allow(this.workerFunction, ['events:PutEvents'], [this.eventBusArn]);
    allow(
      this.workerFunction,
      ['secretsmanager:GetSecretValue'],
      [secretPolicyArn(this.serviceApiKeySecret), secretPolicyArn(this.sealingSecret)],
    );

    // jobs API: read a job; presigned GETs carry the function's own permission to read the objects.
    allow(this.jobsApiFunction, ['dynamodb:GetItem'], [table]);
    allow(this.jobsApiFunction, ['s3:GetObject'], [objects]);

    // reconciler: list open items, complete deliveries (put missing jobs, mark enqueued), renew leases, send.
    allow(this.reconcilerFunction, ['dynamodb:Query'], [openIndex]);
    allow(this.reconcilerFunction, ['dynamodb:PutItem', 'dynamodb:UpdateItem'], [table]);
    allow(this.reconcilerFunction, ['sqs:SendMessage'], [this.queue.queueArn]);

    if (this.eventIngestFunction !== undefined) {
      allow(
        this.eventIngestFunction,
        ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem'],
        [table],
      );
      allow(this.eventIngestFunction, ['sqs:SendMessage'], [this.queue.queueArn]);
      allow(
        this.eventIngestFunction,
        ['secretsmanager:GetSecretValue'],
        [secretPolicyArn(this.sealingSecret)],
      );
    }

    // Customer managed keys: every function touches the table and a queue or the bucket; readers decrypt,
    // writers also generate data keys. Keys of a bucket or secret brought by the caller are theirs to grant.
    const keys = [this.encryptionKey, this.bucket.encryptionKey].filter((k): k is IKey => k !== undefined);
    for (const key of new Set(keys)) {
      for (const writer of [
        this.ingestFunction,
        this.workerFunction,
        this.reconcilerFunction,
        this.eventIngestFunction,
      ]) {
        if (writer !== undefined)
          allow(writer, ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey'], [key.keyArn]);
      }
      allow(this.jobsApiFunction, ['kms:Decrypt'], [key.keyArn]);
    }

    // cdk-nag IAM5 findings are acknowledged one by one, each by its exact id, on the role that holds it.
    const finding = (resource: string): string =>
      `AwsSolutions-IAM5[Resource::${flattenCfnReference(Stack.of(this).resolve(resource))}]`;
    for (const target of [
      this.ingestFunction,
      this.workerFunction,
      this.jobsApiFunction,
      this.reconcilerFunction,
      this.eventIngestFunction,
    ]) {
      if (target === undefined) continue;
      Validations.of(target.executionRole).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'Only the X-Ray statement (PutTraceSegments, PutTelemetryRecords) has Resource "*": X-Ray supports no resource-level permissions.',
      });
    }
    for (const target of [this.workerFunction, this.jobsApiFunction]) {
      Validations.of(target.executionRole).acknowledge({
        id: finding(objects),
        reason:
          'Object keys are built at run time from storage.keyPattern (job ids, dates, file names): the statement covers only this bucket’s objects under the pattern’s literal prefix, with only the object actions the function calls.',
      });
    }
  }
}

/** Throws when a numeric prop is not a whole number within its limits. */
function requireInteger(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`DocRelay: ${name} must be a whole number from ${min} to ${max}, got ${value}`);
  }
}

/** An SQS destination granting only sqs:SendMessage (SqsDestination also grants GetQueueAttributes/Url). */
function sendOnlyQueueDestination(queue: Queue): IDestination {
  return {
    bind: (_scope, fn) => {
      fn.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [queue.queueArn] }));
      return { destination: queue.queueArn };
    },
  };
}

/**
 * The ARN that matches a secret in a policy: a secret imported by name has only a partial ARN, and Secrets
 * Manager appends 6 random characters to every name, so the policy needs `-??????` (what Secret.grantRead does).
 */
export function secretPolicyArn(secret: ISecret): string {
  return secret.secretFullArn ?? `${secret.secretArn}-??????`;
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
