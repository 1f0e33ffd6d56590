/**
 * docrelay's five functions, each built with the grants it needs beside its wiring: only the actions it
 * calls, on only the resources it touches. Every function is a DocRelayFunction (one shared base).
 */
import { Annotations, Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { type IDestination, RecursiveLoop } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { ConfigError } from '../../functions/config/errors';
import type { DocrelayConfig } from '../../functions/config/schema';
import { JOB_TABLE } from '../../functions/config/table-contract';
import { ENQUEUE_GRACE_MS } from '../../functions/core/outbox';
import { senderScheme } from '../../functions/senders';
import {
  DocRelayFunction,
  type DocRelayFunctionName,
  type DocRelayFunctionOptions,
  type DocRelayFunctionProps,
  type FunctionSizing,
} from '../docrelay-function';
import type { DeploymentIdentity } from './identity';
import { acknowledgeWildcardResource } from './nag';
import { configSecretNames, secretPolicyArn } from './secrets';

/** SQS event sources cap concurrency from 2 up (ScalingConfig.MaximumConcurrency). */
const MIN_ESM_MAX_CONCURRENCY = 2;

/** The literal start of a key pattern (before its first placeholder), to scope S3 permissions. */
export function keyPatternPrefix(keyPattern: string): string {
  const literal = keyPattern.split('{', 1)[0] ?? '';
  // Only whole path segments: `docs/{x}` scopes to `docs/`, `doc{x}` to nothing finer than the bucket.
  return literal.includes('/') ? literal.slice(0, literal.lastIndexOf('/') + 1) : '';
}

/** What every function builder shares: the resources to wire, and the settings of the function base. */
export interface FunctionWiring {
  readonly scope: Construct;
  readonly config: DocrelayConfig;
  /** The configuration's name in validation messages (DocRelayProps.configSource). */
  readonly configSource: string;
  readonly configFile: string;
  readonly table: Table;
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly bucket: IBucket;
  readonly sealingSecret: ISecret;
  /** The config's secrets by the names the config gives them. */
  readonly configSecrets: ReadonlyMap<string, ISecret>;
  readonly serviceApiKeySecret: ISecret;
  readonly eventBusArn: string;
  /** The customer managed key of the table, queues and secrets (DocRelayProps.encryptionKey), if any. */
  readonly dataKey?: IKey;
  /** The documents bucket's SSE-KMS key, if any: only the functions that read or write objects use it. */
  readonly bucketKey?: IKey;
  /** The environment every function gets (resource names, lease, receive count). */
  readonly environment: Readonly<Record<string, string>>;
  readonly logRetention: RetentionDays;
  readonly logRemovalPolicy?: RemovalPolicy;
  readonly logLevel?: DocRelayFunctionProps['logLevel'];
  /** X-Ray active tracing of every function. */
  readonly tracing: boolean;
  /** Source maps for every function's stack traces (DocRelayProps.sourceMaps). */
  readonly sourceMaps: boolean;
  /** Metric namespace and service names of this deployment. */
  readonly identity: DeploymentIdentity;
}

type ExtraProps = NonNullable<DocRelayFunctionProps['functionProps']>;

/**
 * What the ingests do on the job table: the delivery's conditional put and its jobs' batch write, and on a
 * duplicate the delivery's read, the jobs' batch read and the outbox's puts and mark (core/outbox.ts).
 */
const INGEST_TABLE_ACTIONS = [
  'dynamodb:BatchGetItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
];

/** A function's settings with its memory and timeout filled. */
export type FunctionOptions = DocRelayFunctionOptions & Required<FunctionSizing>;

/** A docrelay function on the shared base, with the caller's network placement and concurrency. */
function newFunction(
  wiring: FunctionWiring,
  id: string,
  name: DocRelayFunctionName,
  size: FunctionOptions,
  description: string,
  functionProps: ExtraProps = {},
): DocRelayFunction {
  const fn = new DocRelayFunction(wiring.scope, id, {
    name,
    configFile: wiring.configFile,
    description,
    memorySize: size.memorySize,
    timeout: size.timeout,
    environment: { ...size.environment, ...wiring.environment },
    metricsNamespace: wiring.identity.metricsNamespace,
    serviceName: wiring.identity.serviceName(name),
    logRetention: wiring.logRetention,
    ...(wiring.logRemovalPolicy === undefined ? {} : { logRemovalPolicy: wiring.logRemovalPolicy }),
    ...(wiring.logLevel === undefined ? {} : { logLevel: wiring.logLevel }),
    tracing: wiring.tracing,
    sourceMaps: wiring.sourceMaps,
    functionProps: {
      ...(size.vpc === undefined ? {} : { vpc: size.vpc }),
      ...(size.vpcSubnets === undefined ? {} : { vpcSubnets: size.vpcSubnets }),
      ...(size.securityGroups === undefined ? {} : { securityGroups: size.securityGroups }),
      ...(size.reservedConcurrentExecutions === undefined
        ? {}
        : { reservedConcurrentExecutions: size.reservedConcurrentExecutions }),
      ...functionProps,
    },
  });
  return fn;
}

/** Adds one Allow statement to a function's role. */
function allow(fn: DocRelayFunction, actions: string[], resources: string[]): void {
  fn.addToRolePolicy(new PolicyStatement({ actions, resources }));
}

/**
 * Customer managed keys: readers decrypt, writers also generate data keys. The data key (table, queues, secrets)
 * goes to every function; the bucket's key only to those given `bucket` (they read or write objects).
 */
function allowKeys(
  fn: DocRelayFunction,
  wiring: FunctionWiring,
  use: 'read' | 'write',
  bucket: 'bucket' | 'no bucket',
): void {
  const actions = use === 'write' ? ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey'] : ['kms:Decrypt'];
  const keys = new Set([wiring.dataKey, ...(bucket === 'bucket' ? [wiring.bucketKey] : [])]);
  for (const key of keys) if (key !== undefined) allow(fn, actions, [key.keyArn]);
}

/** The bucket's objects under the key pattern's literal prefix, acknowledged as the one wildcard it needs. */
function documentObjects(wiring: FunctionWiring, fn: DocRelayFunction): string {
  const objects = wiring.bucket.arnForObjects(`${keyPatternPrefix(wiring.config.storage.keyPattern)}*`);
  acknowledgeWildcardResource(
    fn.executionRole,
    objects,
    'Object keys are built at run time from storage.keyPattern (job ids, dates, file names): the statement covers only this bucket’s objects under the pattern’s literal prefix, with only the object actions the function calls.',
  );
  return objects;
}

/**
 * A new delivery's jobs are written by its ingest alone until ENQUEUE_GRACE_MS has passed (core/outbox.ts):
 * an ingest that could run longer breaks that, so its timeout must stay below the grace.
 */
function assertWithinGrace(name: string, size: FunctionOptions): void {
  const seconds = size.timeout.toSeconds();
  if (seconds * 1000 >= ENQUEUE_GRACE_MS) {
    throw new Error(
      `docrelay: functions.${name}.timeout is ${seconds} s; it must be under ${ENQUEUE_GRACE_MS / 1000} s, the time a new delivery belongs to its ingest`,
    );
  }
}

/**
 * `POST /v1/hooks/{integrationId}`: records the delivery and its jobs, sends the job messages, and reads the
 * webhook secrets and the sealing secret.
 */
export function buildIngestFunction(wiring: FunctionWiring, size: FunctionOptions): DocRelayFunction {
  assertWithinGrace('ingest', size);
  const fn = newFunction(
    wiring,
    'Ingest',
    'ingest',
    size,
    'docrelay: verifies webhooks and queues their jobs',
  );
  const webhookSecrets = [...configSecretNames(wiring.config).webhook.values()].flat();
  allow(fn, INGEST_TABLE_ACTIONS, [wiring.table.tableArn]);
  allow(fn, ['sqs:SendMessage'], [wiring.queue.queueArn]);
  allow(
    fn,
    ['secretsmanager:GetSecretValue'],
    [
      ...[...new Set(webhookSecrets)].map((name) => secretPolicyArn(wiring.configSecrets.get(name)!)),
      secretPolicyArn(wiring.sealingSecret),
    ],
  );
  // A sender that hands its secret over in a handshake (Asana) has it kept in the integration's first secret.
  const handedSecrets = wiring.config.integrations.flatMap((integration) => {
    const verify = integration.verify;
    const first = verify?.secret === undefined ? undefined : [verify.secret].flat()[0];
    return verify !== undefined &&
      senderScheme(verify.scheme)?.keepsHandedSecret === true &&
      first !== undefined
      ? [first]
      : [];
  });
  if (handedSecrets.length > 0) {
    allow(
      fn,
      ['secretsmanager:PutSecretValue'],
      [...new Set(handedSecrets)].map((name) => secretPolicyArn(wiring.configSecrets.get(name)!)),
    );
  }
  allowKeys(fn, wiring, 'write', 'no bucket');
  return fn;
}

/**
 * The worker's reserved concurrency. SQS event sources cap concurrency from 2 up, so a `service.maxConcurrency`
 * of 1 is enforced by reserving 1 for the worker as well (the caller's own reservation, if any, must be 1).
 * Throws a located ConfigError, which the CDK app prints without a stack trace, when the two disagree.
 */
function workerReservedConcurrency(wiring: FunctionWiring, size: FunctionOptions): number | undefined {
  const maxConcurrency = wiring.config.service.maxConcurrency;
  const reserved = size.reservedConcurrentExecutions;
  if (maxConcurrency >= MIN_ESM_MAX_CONCURRENCY) return reserved;
  if (reserved === undefined || reserved === maxConcurrency) return maxConcurrency;
  throw new ConfigError(wiring.configSource, [
    {
      path: 'service.maxConcurrency',
      message: `${maxConcurrency} is enforced by reserving ${maxConcurrency} concurrent execution for the worker (SQS event sources cap at ${MIN_ESM_MAX_CONCURRENCY} or more), but functions.worker.reservedConcurrentExecutions is ${reserved}: remove it, set it to ${maxConcurrency}, or raise service.maxConcurrency`,
    },
  ]);
}

/**
 * Synth warnings of worker settings that can lose time or jobs: a job may take a service request and a retry,
 * and a batch runs its jobs one after another, so the timeout must cover batchSize of them; reserved
 * concurrency below service.maxConcurrency caps the generations in flight below what the config asks for.
 */
function warnOfWorkerLimits(
  wiring: FunctionWiring,
  size: FunctionOptions,
  batchSize: number,
  reserved: number | undefined,
): void {
  const { maxConcurrency, timeoutSeconds } = wiring.config.service;
  const timeout = size.timeout.toSeconds();
  const perJob = timeoutSeconds * 2;
  if (batchSize === 1 && perJob > timeout) {
    Annotations.of(wiring.scope).addWarningV2(
      'docrelay:workerTimeout',
      `the worker timeout (${timeout} s) leaves little room for service.timeoutSeconds (${timeoutSeconds} s) and a retry; raise functions.worker.timeout`,
    );
  }
  if (batchSize > 1 && batchSize * perJob > timeout) {
    Annotations.of(wiring.scope).addWarningV2(
      'docrelay:workerBatchTimeout',
      `the worker timeout (${timeout} s) is shorter than batchSize (${batchSize}) jobs of service.timeoutSeconds (${timeoutSeconds} s) and a retry each (${batchSize * perJob} s), run one after another; raise functions.worker.timeout to ${Math.min(batchSize * perJob, 900)} s or lower batchSize`,
    );
  }
  if (reserved !== undefined && maxConcurrency >= MIN_ESM_MAX_CONCURRENCY && reserved < maxConcurrency) {
    Annotations.of(wiring.scope).addWarningV2(
      'docrelay:workerReservedConcurrency',
      `functions.worker.reservedConcurrentExecutions (${reserved}) is below service.maxConcurrency (${maxConcurrency}): the event source is capped at ${eventSourceConcurrency(maxConcurrency, reserved)} so its receives are not throttled, and at most that many documents are generated at once; set reservedConcurrentExecutions to at least ${maxConcurrency} or lower service.maxConcurrency to ${Math.max(reserved, 1)}`,
    );
  }
}

/**
 * The event source's MaximumConcurrency: service.maxConcurrency, never above the worker's reserved concurrency
 * (more would have the pollers receive messages Lambda then throttles), and never below SQS's floor of 2. Only
 * a reservation of 1 sits under that floor: its throttled receives are absorbed by the queue's redrive headroom.
 */
export function eventSourceConcurrency(maxConcurrency: number, reserved: number | undefined): number {
  return Math.max(MIN_ESM_MAX_CONCURRENCY, Math.min(maxConcurrency, reserved ?? maxConcurrency));
}

/** Inputs of the worker beyond the shared wiring. */
export interface WorkerOptions {
  readonly batchSize: number;
}

/**
 * The SQS worker: job reads and conditional updates, the copy to S3 (PutObject covers lib-storage's multipart
 * calls; DeleteObject removes files a job no longer keeps), dead letters, re-sent messages, events and its
 * two secrets. ChangeMessageVisibility, which defers a retry, comes with the event source's grants.
 */
export function buildWorkerFunction(
  wiring: FunctionWiring,
  size: FunctionOptions,
  options: WorkerOptions,
): DocRelayFunction {
  const maxConcurrency = wiring.config.service.maxConcurrency;
  const reserved = workerReservedConcurrency(wiring, size);
  const fn = newFunction(
    wiring,
    'Worker',
    'worker',
    { ...size, ...(reserved === undefined ? {} : { reservedConcurrentExecutions: reserved }) },
    'docrelay: generates documents and stores them in S3',
    // A retry or an outage carry-over sends the job's next message to the queue that invokes the worker:
    // Lambda would see SQS → worker → SQS and drop the message after ~16 hops. The job's attempts cap and
    // outage budget bound that chain instead (docs/reliability.md, "Lambda's recursive loop detection").
    { recursiveLoop: RecursiveLoop.ALLOW },
  );
  fn.addEventSource(
    new SqsEventSource(wiring.queue, {
      batchSize: options.batchSize,
      reportBatchItemFailures: true,
      // The worker runs one generation at a time per invocation, so this caps generations in flight.
      maxConcurrency: eventSourceConcurrency(maxConcurrency, reserved),
    }),
  );
  warnOfWorkerLimits(wiring, size, options.batchSize, reserved);
  const objects = documentObjects(wiring, fn);
  allow(fn, ['dynamodb:GetItem', 'dynamodb:UpdateItem'], [wiring.table.tableArn]);
  // GetObject covers the HeadObject that checks a stored object's size where S3 answers no checksum.
  allow(fn, ['s3:PutObject', 's3:AbortMultipartUpload', 's3:GetObject', 's3:DeleteObject'], [objects]);
  // A retried job lists its own key prefix for files an earlier attempt left unrecorded (core/settle-job.ts).
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['s3:ListBucket'],
      resources: [wiring.bucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': [`${keyPatternPrefix(wiring.config.storage.keyPattern)}*`] } },
    }),
  );
  allow(fn, ['sqs:SendMessage'], [wiring.queue.queueArn, wiring.deadLetterQueue.queueArn]);
  allow(fn, ['events:PutEvents'], [wiring.eventBusArn]);
  allow(
    fn,
    ['secretsmanager:GetSecretValue'],
    [secretPolicyArn(wiring.serviceApiKeySecret), secretPolicyArn(wiring.sealingSecret)],
  );
  allowKeys(fn, wiring, 'write', 'bucket');
  return fn;
}

/** `GET /v1/jobs/{jobId}`: reads a job; presigned GETs carry the function's own permission to read objects. */
export function buildJobsApiFunction(wiring: FunctionWiring, size: FunctionOptions): DocRelayFunction {
  const fn = newFunction(
    wiring,
    'JobsApi',
    'jobs-api',
    size,
    'docrelay: GET /v1/jobs, /v1/jobs/{jobId}, /v1/deliveries/{deliveryId}',
  );
  const objects = documentObjects(wiring, fn);
  allow(fn, ['dynamodb:GetItem'], [wiring.table.tableArn]);
  allow(
    fn,
    ['dynamodb:Query'],
    [JOB_TABLE.jobsByTimeIndex, JOB_TABLE.byDeliveryIndex].map(
      (index) => `${wiring.table.tableArn}/index/${index}`,
    ),
  );
  allow(fn, ['s3:GetObject'], [objects]);
  allowKeys(fn, wiring, 'read', 'bucket');
  return fn;
}

/**
 * The scheduled reconciler: lists open items on the open-jobs index, completes deliveries (puts missing jobs,
 * marks them enqueued), renews leases and re-sends jobs. A failed pass lands in `failureQueue`, with the error.
 */
export function buildReconcilerFunction(
  wiring: FunctionWiring,
  size: FunctionOptions,
  failureQueue: Queue,
): DocRelayFunction {
  const fn = newFunction(wiring, 'Reconciler', 'reconciler', size, 'docrelay: re-sends stranded jobs', {
    // The next tick retries; a failed pass need not be retried asynchronously, but it is kept (and alarmed).
    retryAttempts: 0,
    onFailure: sendOnlyQueueDestination(failureQueue),
  });
  allow(fn, ['dynamodb:Query'], [`${wiring.table.tableArn}/index/${JOB_TABLE.openJobsIndex}`]);
  // GetItem: the index holds keys only, so each listed item is read whole; BatchGetItem: which jobs exist.
  allow(
    fn,
    ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
    [wiring.table.tableArn],
  );
  // GetQueueAttributes: whether a stranded job's message may still be waiting (core/reconcile.ts).
  allow(fn, ['sqs:GetQueueAttributes', 'sqs:SendMessage'], [wiring.queue.queueArn]);
  allowKeys(fn, wiring, 'write', 'no bucket');
  return fn;
}

/**
 * EventBridge deliveries: records the delivery and its jobs like the ingest does, without webhook secrets;
 * after Lambda's own retries a failed event lands in `deadLetterQueue`, with the error.
 */
export function buildEventIngestFunction(
  wiring: FunctionWiring,
  size: FunctionOptions,
  deadLetterQueue: Queue,
): DocRelayFunction {
  assertWithinGrace('eventIngest', size);
  const fn = newFunction(
    wiring,
    'EventIngest',
    'event-ingest',
    size,
    'docrelay: turns matching EventBridge events into deliveries',
    {
      retryAttempts: 2,
      maxEventAge: Duration.hours(6),
      onFailure: sendOnlyQueueDestination(deadLetterQueue),
    },
  );
  allow(fn, INGEST_TABLE_ACTIONS, [wiring.table.tableArn]);
  allow(fn, ['sqs:SendMessage'], [wiring.queue.queueArn]);
  allow(fn, ['secretsmanager:GetSecretValue'], [secretPolicyArn(wiring.sealingSecret)]);
  allowKeys(fn, wiring, 'write', 'no bucket');
  return fn;
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
