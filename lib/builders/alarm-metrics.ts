/**
 * The metrics behind the alarms that read more than one metric: the Document Generation Service failing (the
 * worker's EMF metrics), the job table's indexes throttled, senders throttled or refused by the HTTP API.
 */
import { Duration } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { type IMetric, MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { FilterPattern, type ILogGroup, MetricFilter } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

const FIVE_MINUTES = Duration.minutes(5);

/** The name of the metric counting the HTTP API's 429 answers (from its access logs). */
export const API_THROTTLED_METRIC = 'ApiThrottled';

/** One of a function's EMF metrics (Powertools adds the `service` dimension to each). */
export function emfMetric(namespace: string, service: string, metricName: string, statistic = 'Sum'): Metric {
  return new Metric({
    namespace,
    metricName,
    dimensionsMap: { service },
    statistic,
    period: FIVE_MINUTES,
  });
}

/**
 * The worker's retries in five minutes when it stored nothing, else 0. Lambda's `Errors` stays 0 through an
 * outage (failures are batch item failures) and each requeue resets the queue's oldest-message age, so this
 * is the metric that sees the service failing every call.
 */
export function failedAttemptsNoneStored(namespace: string, workerService: string): IMetric {
  return new MathExpression({
    expression: 'IF(FILL(stored, 0) == 0, FILL(retries, 0), 0)',
    usingMetrics: {
      retries: emfMetric(namespace, workerService, 'JobRetries'),
      stored: emfMetric(namespace, workerService, 'JobsStored'),
    },
    label: 'Failed attempts while nothing was stored',
    period: FIVE_MINUTES,
  });
}

/**
 * Read and write throttle events of the job table's GSIs, summed. A throttled index throttles the table's
 * writes that update it (the ingest's, the worker's claims), which the table's own metrics do not show.
 */
export function indexThrottles(table: ITable, indexNames: readonly string[]): IMetric | undefined {
  if (indexNames.length === 0) return undefined;
  const usingMetrics: Record<string, IMetric> = {};
  indexNames.forEach((indexName, i) => {
    for (const [key, metricName] of [
      [`r${i}`, 'ReadThrottleEvents'],
      [`w${i}`, 'WriteThrottleEvents'],
    ] as const) {
      usingMetrics[key] = new Metric({
        namespace: 'AWS/DynamoDB',
        metricName,
        dimensionsMap: { TableName: table.tableName, GlobalSecondaryIndexName: indexName },
        statistic: 'Sum',
        period: FIVE_MINUTES,
      });
    }
  });
  return new MathExpression({
    expression: Object.keys(usingMetrics)
      .map((key) => `FILL(${key}, 0)`)
      .join(' + '),
    usingMetrics,
    label: 'Throttled index requests',
    period: FIVE_MINUTES,
  });
}

/**
 * 429 answers of the HTTP API, counted from its access logs (HTTP APIs publish 4xx only in aggregate): a
 * sender's route hit its throttle, and that sender's deliveries wait for its retries.
 */
export function apiThrottledMetric(scope: Construct, accessLogs: ILogGroup, namespace: string): Metric {
  new MetricFilter(scope, 'ApiThrottledFilter', {
    logGroup: accessLogs,
    filterPattern: FilterPattern.stringValue('$.status', '=', '429'),
    metricNamespace: namespace,
    metricName: API_THROTTLED_METRIC,
    metricValue: '1',
  });
  return new Metric({ namespace, metricName: API_THROTTLED_METRIC, statistic: 'Sum', period: FIVE_MINUTES });
}

/**
 * The share (in percent) of the HTTP API's requests answered 4xx, in five minutes with at least `minRequests`
 * requests (else 0): senders refused in bulk (a rotated secret, a changed payload), or a flood of junk.
 */
export function api4xxPercent(api: IHttpApi, minRequests: number): IMetric {
  const sum = { period: FIVE_MINUTES, statistic: 'Sum' };
  return new MathExpression({
    expression: `IF(FILL(requests, 0) >= ${minRequests}, 100 * FILL(errors, 0) / requests, 0)`,
    usingMetrics: { requests: api.metricCount(sum), errors: api.metricClientError(sum) },
    label: 'Requests answered 4xx (%)',
    period: FIVE_MINUTES,
  });
}
