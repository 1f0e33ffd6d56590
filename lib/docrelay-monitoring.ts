/**
 * docrelay's alarms and dashboard. Each alarm answers one operator question and has its runbook in
 * docs/operations.md; alarms notify an SNS topic given by the caller or created here.
 */
import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  AlarmStatusWidget,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  type IMetric,
  MathExpression,
  Metric,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { type ITopic, Topic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  api4xxPercent,
  apiThrottledMetric,
  emfMetric,
  failedAttemptsNoneStored,
  indexThrottles,
} from './builders/alarm-metrics';

/** Thresholds of docrelay's alarms. */
export interface DocRelayAlarmThresholds {
  /** Alarm when the oldest message of the jobs queue is older than this. @default Duration.minutes(30) */
  readonly oldestMessageAge?: Duration;
  /**
   * Alarm when the worker has at least this many errors in 5 minutes: crashes and timeouts (WorkerErrors), or
   * failed table or queue calls under a job (WorkerFailures), each counted apart. @default 1
   */
  readonly workerErrors?: number;
  /** Alarm when the HTTP API answers at least this many 5xx in 5 minutes. @default 1 */
  readonly api5xx?: number;
  /**
   * Alarm when, in two of three 5-minute periods, the worker retried at least this many attempts and stored
   * nothing (the service failing every call). @default 1
   */
  readonly failedAttempts?: number;
  /** Alarm when the HTTP API answers at least this many 429s (a route's throttle) in 5 minutes. @default 1 */
  readonly apiThrottled?: number;
  /**
   * Alarm when at least this percentage of the HTTP API's requests are answered 4xx, through 15 minutes with
   * 20 requests or more in each 5. @default 50
   */
  readonly api4xxPercent?: number;
}

/** Props of `DocRelayMonitoring`. */
export interface DocRelayMonitoringProps {
  /** Namespace of the EMF metrics the functions publish (their POWERTOOLS_METRICS_NAMESPACE). */
  readonly metricsNamespace: string;
  /** The Powertools service name (the metrics' `service` dimension) of each function. */
  readonly serviceNames: Readonly<Record<'ingest' | 'worker' | 'reconciler' | 'event-ingest', string>>;
  readonly api: IHttpApi;
  readonly ingestFunction: IFunction;
  readonly workerFunction: IFunction;
  readonly jobsApiFunction: IFunction;
  readonly reconcilerFunction: IFunction;
  /** Absent when no integration takes EventBridge events. */
  readonly eventIngestFunction?: IFunction;
  readonly table: ITable;
  /** The job table's GSIs (their throttling is alarmed apart from the table's). @default none */
  readonly tableIndexNames?: readonly string[];
  /** The HTTP API's access logs (its 429 answers are counted from them). */
  readonly accessLogGroup: ILogGroup;
  readonly queue: IQueue;
  readonly deadLetterQueue: IQueue;
  /** Failed EventBridge deliveries; absent when no integration takes events. */
  readonly eventsDeadLetterQueue?: IQueue;
  /** Where alarms are sent. @default a new SNS topic (encrypted with `encryptionKey` when given) */
  readonly alarmTopic?: ITopic;
  /** Key for a created topic. @default none (notifications carry no customer data) */
  readonly encryptionKey?: IKey;
  /** @default see DocRelayAlarmThresholds */
  readonly thresholds?: DocRelayAlarmThresholds;
}

const FIVE_MINUTES = Duration.minutes(5);

/** Alarms (to SNS) and a dashboard for one docrelay deployment. */
export class DocRelayMonitoring extends Construct {
  /** The topic alarms notify (the given one or the created one). */
  public readonly alarmTopic: ITopic;
  /** The jobs dead-letter queue holds at least one message. */
  public readonly deadLetterQueueAlarm: Alarm;
  /** The EventBridge deliveries' dead-letter queue holds a message (only with event integrations). */
  public readonly eventsDeadLetterQueueAlarm?: Alarm;
  /** A message arrived in the jobs dead-letter queue (fires again on every new arrival, not only once). */
  public readonly deadLetterArrivalsAlarm: Alarm;
  /** The reconciler failed (its failed invocations also land in the reconciler's failure queue). */
  public readonly reconcilerErrorsAlarm: Alarm;
  /** The worker was throttled (reserved or account concurrency exhausted). */
  public readonly workerThrottlesAlarm: Alarm;
  /** DynamoDB throttled reads or writes of the job table. */
  public readonly tableThrottlesAlarm: Alarm;
  /** DynamoDB throttled reads or writes of the job table's GSIs (absent when every index is left out). */
  public readonly indexThrottlesAlarm?: Alarm;
  /** The worker retried attempts and stored nothing, in two of three 5-minute periods: the service is failing. */
  public readonly serviceFailingAlarm: Alarm;
  /** The worker's table or queue calls failed under a job (its EMF `WorkerErrors`; Lambda's Errors stay 0). */
  public readonly workerFailuresAlarm: Alarm;
  /** The HTTP API answered 429: a sender's route hit its throttle. */
  public readonly apiThrottledAlarm: Alarm;
  /** Most of the HTTP API's requests were answered 4xx for 15 minutes. */
  public readonly api4xxAlarm: Alarm;
  /** The worker crashed or timed out. */
  public readonly workerErrorsAlarm: Alarm;
  /** The jobs queue's oldest message is older than the threshold. */
  public readonly oldestMessageAlarm: Alarm;
  /** The HTTP API answered 5xx. */
  public readonly api5xxAlarm: Alarm;
  /** A settled job's `Document Stored` / `Document Failed` event was given up (EventBridge refused it). */
  public readonly eventsNotPublishedAlarm: Alarm;
  /** Every alarm above. */
  public readonly alarms: readonly Alarm[];
  /** The operations dashboard. */
  public readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: DocRelayMonitoringProps) {
    super(scope, id);
    const thresholds = props.thresholds ?? {};
    this.alarmTopic = props.alarmTopic ?? this.createTopic(props.encryptionKey);
    const action = new SnsAction(this.alarmTopic);

    const alarm = (
      alarmId: string,
      metric: IMetric,
      threshold: number,
      description: string,
      periods: { evaluationPeriods: number; datapointsToAlarm: number } = {
        evaluationPeriods: 1,
        datapointsToAlarm: 1,
      },
    ): Alarm => {
      const created = new Alarm(this, alarmId, {
        metric,
        alarmDescription: `${description} Runbook: docs/operations.md, ${alarmId}.`,
        threshold,
        ...periods,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        // No data means no traffic (or an empty queue), which is healthy.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      created.addAlarmAction(action);
      created.addOkAction(action);
      return created;
    };

    this.deadLetterQueueAlarm = alarm(
      'DeadLetterQueueNotEmpty',
      props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: FIVE_MINUTES,
        statistic: 'Maximum',
      }),
      1,
      'docrelay: a job failed for good and its message is in the dead-letter queue (npx docrelay dlq list).',
    );
    if (props.eventsDeadLetterQueue !== undefined) {
      this.eventsDeadLetterQueueAlarm = alarm(
        'EventsDeadLetterQueueNotEmpty',
        props.eventsDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: FIVE_MINUTES,
          statistic: 'Maximum',
        }),
        1,
        'docrelay: an EventBridge event could not become a delivery and is in the events dead-letter queue.',
      );
    }
    // The depth's increase, not its level: "not empty" fires once and stays silent while later jobs fail too.
    // Missing points count as 0, so the first arrival after a quiet spell is an increase.
    this.deadLetterArrivalsAlarm = alarm(
      'DeadLetterQueueArrivals',
      new MathExpression({
        expression: 'DIFF(FILL(depth, 0))',
        usingMetrics: {
          depth: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
            period: FIVE_MINUTES,
            statistic: 'Maximum',
          }),
        },
        label: 'New dead letters',
        period: FIVE_MINUTES,
      }),
      1,
      'docrelay: another job failed for good: new messages arrived in the dead-letter queue (npx docrelay dlq list).',
    );
    this.reconcilerErrorsAlarm = alarm(
      'ReconcilerErrors',
      props.reconcilerFunction.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
      1,
      'docrelay: the reconciler failed; stranded jobs are not re-sent until it succeeds (its failed invocations are in the reconciler failure queue).',
    );
    this.workerThrottlesAlarm = alarm(
      'WorkerThrottles',
      props.workerFunction.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }),
      1,
      'docrelay: the worker was throttled (account or reserved concurrency exhausted); jobs wait in the queue.',
    );
    const throttled = (metricName: string) =>
      props.table.metric(metricName, { period: FIVE_MINUTES, statistic: 'Sum' });
    this.tableThrottlesAlarm = alarm(
      'TableThrottles',
      new MathExpression({
        expression: 'FILL(reads, 0) + FILL(writes, 0)',
        usingMetrics: { reads: throttled('ReadThrottleEvents'), writes: throttled('WriteThrottleEvents') },
        label: 'Throttled table requests',
        period: FIVE_MINUTES,
      }),
      1,
      'docrelay: DynamoDB throttled requests to the job table; ingest may answer 5xx and jobs may be retried.',
    );
    const indexThrottleMetric = indexThrottles(props.table, props.tableIndexNames ?? []);
    if (indexThrottleMetric !== undefined) {
      this.indexThrottlesAlarm = alarm(
        'IndexThrottles',
        indexThrottleMetric,
        1,
        'docrelay: DynamoDB throttled requests to an index of the job table; the table writes that update it are throttled too (ingest 5xx, job retries).',
      );
    }
    const worker = props.serviceNames.worker;
    this.serviceFailingAlarm = alarm(
      'ServiceFailing',
      failedAttemptsNoneStored(props.metricsNamespace, worker),
      thresholds.failedAttempts ?? 1,
      'docrelay: the worker retried jobs and stored none in two of the last three 5-minute periods: the Document Generation Service (or the way to it) is failing every call. Jobs wait and retry; none is lost while the outage lasts less than a day.',
      { evaluationPeriods: 3, datapointsToAlarm: 2 },
    );
    this.workerFailuresAlarm = alarm(
      'WorkerFailures',
      emfMetric(props.metricsNamespace, worker, 'WorkerErrors'),
      thresholds.workerErrors ?? 1,
      'docrelay: the worker’s calls to the job table or the queue failed under a job (the message comes back after its visibility timeout).',
    );
    const throttledRequests = apiThrottledMetric(this, props.accessLogGroup, props.metricsNamespace);
    this.apiThrottledAlarm = alarm(
      'ApiThrottled',
      throttledRequests,
      thresholds.apiThrottled ?? 1,
      'docrelay: the HTTP API answered 429: an integration’s webhook route (or the read routes) hit its throttle; that sender retries later, or drops the webhook.',
    );
    this.api4xxAlarm = alarm(
      'Api4xx',
      api4xxPercent(props.api, 20),
      thresholds.api4xxPercent ?? 50,
      'docrelay: most requests to the HTTP API were answered 4xx for 15 minutes (refused signatures, unknown paths, throttling): a sender is misconfigured or the API is flooded.',
      { evaluationPeriods: 3, datapointsToAlarm: 3 },
    );
    this.workerErrorsAlarm = alarm(
      'WorkerErrors',
      props.workerFunction.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
      thresholds.workerErrors ?? 1,
      'docrelay: the worker function crashed or timed out (job failures are not errors; this is not normal).',
    );
    const oldestSeconds = (thresholds.oldestMessageAge ?? Duration.minutes(30)).toSeconds();
    this.oldestMessageAlarm = alarm(
      'OldestJobMessageAge',
      props.queue.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: 'Maximum' }),
      oldestSeconds,
      `docrelay: a job has waited over ${oldestSeconds} s in the jobs queue (service slow or down, or the worker failing).`,
    );
    this.api5xxAlarm = alarm(
      'Api5xx',
      props.api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' }),
      thresholds.api5xx ?? 1,
      'docrelay: the HTTP API answered 5xx; senders will retry, but something is failing.',
    );
    // The worker keeps a job's message while its event fails and gives it up at the message's last receive.
    this.eventsNotPublishedAlarm = alarm(
      'EventsNotPublished',
      new Metric({
        namespace: props.metricsNamespace,
        metricName: 'EventsNotPublished',
        dimensionsMap: { service: props.serviceNames.worker },
        statistic: 'Sum',
        period: FIVE_MINUTES,
      }),
      1,
      'docrelay: a job was settled but its Document Stored/Failed event could not be published to EventBridge after every retry (the job and its files are fine; consumers of the events missed it).',
    );
    this.alarms = [
      this.deadLetterQueueAlarm,
      ...(this.eventsDeadLetterQueueAlarm === undefined ? [] : [this.eventsDeadLetterQueueAlarm]),
      this.deadLetterArrivalsAlarm,
      this.reconcilerErrorsAlarm,
      this.workerThrottlesAlarm,
      this.tableThrottlesAlarm,
      ...(this.indexThrottlesAlarm === undefined ? [] : [this.indexThrottlesAlarm]),
      this.serviceFailingAlarm,
      this.workerFailuresAlarm,
      this.apiThrottledAlarm,
      this.api4xxAlarm,
      this.workerErrorsAlarm,
      this.oldestMessageAlarm,
      this.api5xxAlarm,
      this.eventsNotPublishedAlarm,
    ];
    this.dashboard = this.createDashboard(props, throttledRequests);
  }

  private createTopic(key: IKey | undefined): Topic {
    const topic = new Topic(this, 'AlarmTopic', {
      displayName: 'docrelay alarms',
      enforceSSL: true,
      ...(key === undefined ? {} : { masterKey: key }),
    });
    // enforceSSL gives the topic a policy of its own, which replaces SNS's default one: without this statement
    // nothing would allow CloudWatch to publish. Only alarms of this account and region may.
    const stack = Stack.of(this);
    const cloudWatch = new ServicePrincipal('cloudwatch.amazonaws.com');
    const fromOwnAlarms = {
      StringEquals: { 'aws:SourceAccount': stack.account },
      ArnLike: {
        'aws:SourceArn': stack.formatArn({
          service: 'cloudwatch',
          resource: 'alarm',
          resourceName: '*',
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      },
    };
    topic.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowCloudWatchAlarms',
        principals: [cloudWatch],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: fromOwnAlarms,
      }),
    );
    // Without a customer key the topic stays unencrypted: notifications carry alarm names and metric values
    // only, and the AWS managed SNS key would stop CloudWatch from publishing (its policy cannot be changed).
    if (key !== undefined) {
      // CloudWatch publishes to an encrypted topic only when the key lets it, under the same conditions (a
      // no-op for imported keys, whose policy the owner must extend; docs/deploy.md says how).
      key.addToResourcePolicy(
        new PolicyStatement({
          sid: 'AllowCloudWatchAlarmsToUseTheKey',
          principals: [cloudWatch],
          actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
          resources: ['*'],
          conditions: fromOwnAlarms,
        }),
      );
    }
    return topic;
  }

  private createDashboard(props: DocRelayMonitoringProps, throttledRequests: Metric): Dashboard {
    const dashboard = new Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    const emf = (
      metricName: string,
      fn: keyof DocRelayMonitoringProps['serviceNames'],
      statistic = 'Sum',
    ): Metric =>
      new Metric({
        namespace: props.metricsNamespace,
        metricName,
        // Powertools Metrics adds the `service` dimension (POWERTOOLS_SERVICE_NAME) to every metric.
        dimensionsMap: { service: props.serviceNames[fn] },
        statistic,
        period: FIVE_MINUTES,
      });
    const sum = { period: FIVE_MINUTES, statistic: 'Sum' };
    const functions: Array<[string, IFunction]> = [
      ['ingest', props.ingestFunction],
      ['worker', props.workerFunction],
      ['jobs-api', props.jobsApiFunction],
      ['reconciler', props.reconcilerFunction],
      ...(props.eventIngestFunction === undefined
        ? []
        : ([['event-ingest', props.eventIngestFunction]] as Array<[string, IFunction]>)),
    ];
    dashboard.addWidgets(
      new TextWidget({
        markdown: '# docrelay\nWebhooks in, documents in S3. Alarms and what to do: **docs/operations.md**.',
        width: 24,
        height: 2,
      }),
    );
    dashboard.addWidgets(
      new AlarmStatusWidget({ title: 'Alarms', alarms: [...this.alarms], width: 24, height: 3 }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'HTTP API',
        left: [
          props.api.metricCount(sum),
          props.api.metricClientError(sum),
          props.api.metricServerError(sum),
          throttledRequests.with({ label: '429 (throttled)' }),
        ],
        right: [props.api.metricLatency({ period: FIVE_MINUTES, statistic: 'p99' })],
        width: 12,
      }),
      new GraphWidget({
        title: 'Deliveries',
        left: [
          emf('DeliveriesAccepted', 'ingest'),
          emf('DuplicateDeliveries', 'ingest'),
          emf('DeliveriesRefused', 'ingest'),
          emf('IngestErrors', 'ingest'),
          emf('JobsQueued', 'ingest'),
          ...(props.eventIngestFunction === undefined
            ? []
            : [
                emf('DeliveriesAccepted', 'event-ingest'),
                emf('DuplicateDeliveries', 'event-ingest'),
                emf('JobsQueued', 'event-ingest'),
              ]),
        ],
        width: 12,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Jobs',
        left: [
          emf('JobsStored', 'worker'),
          emf('JobsFailed', 'worker'),
          emf('JobRetries', 'worker'),
          emf('PoisonMessages', 'worker'),
          emf('EventRetries', 'worker'),
          emf('EventsNotPublished', 'worker'),
          emf('JobsResent', 'reconciler'),
        ],
        right: [emf('JobDuration', 'worker', 'p90')],
        width: 12,
      }),
      new GraphWidget({
        title: 'Queues',
        left: [
          props.queue.metricApproximateNumberOfMessagesVisible({
            period: FIVE_MINUTES,
            statistic: 'Maximum',
          }),
          props.queue.metricApproximateNumberOfMessagesNotVisible({
            period: FIVE_MINUTES,
            statistic: 'Maximum',
          }),
          props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
            period: FIVE_MINUTES,
            statistic: 'Maximum',
            label: 'Dead letters',
          }),
        ],
        right: [
          props.queue.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: 'Maximum' }),
        ],
        width: 12,
      }),
    );
    dashboard.addWidgets(
      new GraphWidget({
        title: 'Function errors',
        left: functions.map(([name, fn]) => fn.metricErrors({ ...sum, label: name })),
        width: 8,
      }),
      new GraphWidget({
        title: 'Function duration (p99)',
        left: functions.map(([name, fn]) =>
          fn.metricDuration({ period: FIVE_MINUTES, statistic: 'p99', label: name }),
        ),
        width: 8,
      }),
      new GraphWidget({
        title: 'Worker concurrency and throttles',
        left: [
          new Metric({
            namespace: 'AWS/Lambda',
            metricName: 'ConcurrentExecutions',
            dimensionsMap: { FunctionName: props.workerFunction.functionName },
            statistic: 'Maximum',
            period: FIVE_MINUTES,
          }),
          props.workerFunction.metricThrottles(sum),
        ],
        width: 8,
      }),
    );
    return dashboard;
  }
}
