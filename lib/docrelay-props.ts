/** The DocRelay construct's props: what a caller may bring, size and tune. */

import type { RemovalPolicy } from 'aws-cdk-lib';
import { Duration } from 'aws-cdk-lib';
import type { HttpApiProps, ThrottleSettings } from 'aws-cdk-lib/aws-apigatewayv2';
import type { ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import type { TableProps } from 'aws-cdk-lib/aws-dynamodb';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IHostedZone } from 'aws-cdk-lib/aws-route53';
import type { BucketProps, IBucket, LifecycleRule } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { QueueProps } from 'aws-cdk-lib/aws-sqs';
import type { DocrelayConfigInput } from '../functions/config/schema';
import type { JobTableIndexName } from './builders/table';
import type { DocRelayFunctionOptions, FunctionSizing } from './docrelay-function';
import type { DocRelayAlarmThresholds } from './docrelay-monitoring';

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
      /**
       * The bucket's SSE-KMS key, for a bucket that does not carry it (`Bucket.fromBucketName`,
       * `fromBucketArn`): the worker and jobs-api roles are allowed to use it (its key policy must allow IAM
       * policies). @default `existing.encryptionKey`: none for an imported bucket (SSE-S3 needs none)
       */
      readonly encryptionKey?: IKey;
      readonly create?: never;
    }
  | {
      readonly existing?: never;
      /** The created bucket uses DocRelayProps.encryptionKey. */
      readonly encryptionKey?: never;
      /** Settings of the created bucket. @default see DocRelayNewBucketProps */
      readonly create?: DocRelayNewBucketProps;
    };

/**
 * Settings of docrelay's functions: memory and timeout (docs/deploy.md, "Memory and timeouts", says why these
 * defaults), VPC, reserved concurrency, extra environment.
 */
export interface DocRelayFunctionsSizing {
  /** @default 512 MB, 10 s */
  readonly ingest?: DocRelayFunctionOptions;
  /** @default 1024 MB, 300 s */
  readonly worker?: DocRelayFunctionOptions;
  /** @default 256 MB, 10 s */
  readonly jobsApi?: DocRelayFunctionOptions;
  /** @default 256 MB, 30 s */
  readonly eventIngest?: DocRelayFunctionOptions;
  /** @default 256 MB, 60 s */
  readonly reconciler?: DocRelayFunctionOptions;
}

/** A custom domain for the HTTP API, so webhook URLs survive a recreated stack. */
export interface DocRelayDomainProps {
  /** The domain name, e.g. `hooks.example.com`. */
  readonly domainName: string;
  /** An ACM certificate for it, in the stack's region. */
  readonly certificate: ICertificate;
  /** A hosted zone to create the alias record in. @default none: point the name at the API yourself */
  readonly hostedZone?: IHostedZone;
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
   * replaced, see the stack outputs) instead of importing existing secrets by name. Either way their names
   * carry `secretPrefix` (`DocRelay-prod/docrelay/github-webhook`).
   * @default false
   */
  readonly createSecrets?: boolean;
  /**
   * Prefix of the Secrets Manager name of every config secret, imported or created: the functions read (and
   * are granted) `<secretPrefix><name in the config>` only, so two deployments of one config in one account
   * share no secret. `''` opts out, for secrets deliberately shared between deployments (docs/upgrade.md).
   * @default `<deploymentName>/`
   */
  readonly secretPrefix?: string;
  /**
   * Secrets given as constructs, by the name the config gives them (`service.apiKeySecret`, a webhook's
   * `verify.secret`); each needs a name known at synth. Others are imported by name or created.
   * @default none: every config secret is imported by name (or created, with `createSecrets`)
   */
  readonly secrets?: Readonly<Record<string, ISecret>>;
  /**
   * The deployment's name: the metric namespace (`docrelay/<name>`), the functions' service names
   * (`<name>-worker`), created secrets' name prefix (`<name>/`) and the HTTP API's name derive from it.
   * @default the stack name
   */
  readonly deploymentName?: string;
  /** The secret that seals payloads and links at rest. @default a new secret with a generated random value */
  readonly sealingSecret?: ISecret;
  /**
   * Receives of a job message before it goes to the dead-letter queue, 1 to 984 (the queue's redrive allows 16
   * more, for receives Lambda throttles, within SQS's 1000). @default 8
   */
  readonly maxReceiveCount?: number;
  /**
   * Messages per worker invocation, processed one after another: the worker timeout must cover batchSize jobs
   * (a synth warning says when it does not). @default 1
   */
  readonly batchSize?: number;
  /**
   * Throttling of each route of the HTTP API: every integration's webhook route (unless its config sets
   * `throttle`) and the read routes each get these limits of their own. @default rateLimit 50 requests/s, burstLimit 100
   */
  readonly throttle?: ThrottleSettings;
  /**
   * GSIs of the job table to leave out, for an upgrade that changes more than one index: DynamoDB creates or
   * deletes one GSI per stack update, so such an upgrade deploys once without them, then once with them
   * (docs/upgrade.md). A listing that needs a left-out index fails until the second deploy.
   * @default none: every index
   */
  readonly omitTableIndexes?: readonly JobTableIndexName[];
  /** Memory, timeout, VPC, reserved concurrency and extra environment per function. @default see DocRelayFunctionsSizing */
  readonly functions?: DocRelayFunctionsSizing;
  /** Retention of the functions' logs and the API access logs. @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /** Powertools log level of every function. @default 'INFO' */
  readonly logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /**
   * X-Ray active tracing of every function: traces of each invocation with its AWS SDK and service calls
   * (X-Ray bills per trace), and the X-Ray write actions on each role. Off, the functions do not load the
   * X-Ray SDK at all, which shortens every cold start (docs/deploy.md, "Tracing").
   * @default false
   */
  readonly tracing?: boolean;
  /**
   * Source maps for the functions' stack traces (`NODE_OPTIONS=--enable-source-maps` and a map in each
   * asset). Node parses the map at every cold start, which costs load CPU (docs/deploy.md, "Source maps").
   * Off, traces still name the functions, at positions in the bundle.
   * @default false
   */
  readonly sourceMaps?: boolean;
  /** How often the reconciler re-sends stranded jobs. @default Duration.minutes(5) */
  readonly reconcileEvery?: Duration;
  /**
   * What happens to the table, the created bucket, secrets and queues, and the log groups when the stack is
   * deleted. @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * DynamoDB deletion protection of the job table: a stack deletion or replacement cannot delete it until it
   * is turned off. @default true
   */
  readonly deletionProtection?: boolean;
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
    | 'deletionProtection'
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
    | 'removalPolicy'
  >;
  /**
   * A custom domain for the API: the outputs and `webhookUrl()` use it. Required for
   * `apiProps.disableExecuteApiEndpoint`. @default none: the execute-api address
   */
  readonly domain?: DocRelayDomainProps;
  /** Escape hatch for the jobs dead-letter queue; encryption and TLS are applied over it. */
  readonly deadLetterQueueProps?: Omit<
    QueueProps,
    | 'encryption'
    | 'encryptionMasterKey'
    | 'enforceSSL'
    | 'queueName'
    | 'fifo'
    | 'removalPolicy'
    | 'deadLetterQueue'
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
  // Streams files, so memory does not grow with file size; the extra memory buys CPU for TLS and SHA-256 and
  // network bandwidth. 300 s covers a slow generation plus a large copy.
  worker: { memorySize: 1024, timeout: Duration.seconds(300) },
  jobsApi: { memorySize: 256, timeout: Duration.seconds(10) },
  eventIngest: { memorySize: 256, timeout: Duration.seconds(30) },
  // One bounded pass per tick.
  reconciler: { memorySize: 256, timeout: Duration.seconds(60) },
};
