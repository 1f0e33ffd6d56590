/**
 * What the entry points' unit tests share: Powertools tools that record instead of printing (log lines and
 * metrics are asserted), a Lambda context, and events in the shapes API Gateway (HTTP API, payload 2.0), SQS
 * and EventBridge deliver.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import type { APIGatewayProxyEventV2, Context, SQSEvent, SQSRecord } from 'aws-lambda';
import type { Observability } from '../../../functions/commons/observability';

/** A log line or a metric as the tools were given them. */
export interface LogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
  readonly fields: Record<string, unknown>;
}
export interface MetricPoint {
  readonly name: string;
  readonly unit: string;
  readonly value: number;
}

const quiet = (): void => undefined;

/** Observability whose logger and metrics record what they are given; nothing reaches stdout. */
export function recordingObservability(functionName: string): Observability & {
  lines: LogLine[];
  points: MetricPoint[];
  metricNames: () => string[];
} {
  const serviceName = `docrelay-${functionName}`;
  const logger = new Logger({ serviceName, logLevel: 'SILENT' });
  const metrics = new Metrics({
    namespace: 'docrelay-unit',
    serviceName,
    logger: { debug: quiet, info: quiet, warn: quiet, error: quiet },
  });
  const tracer = new Tracer({ serviceName, enabled: false });
  const lines: LogLine[] = [];
  const points: MetricPoint[] = [];
  for (const level of ['debug', 'info', 'warn', 'error'] as const) {
    jest.spyOn(logger, level).mockImplementation((message: unknown, ...extra: unknown[]) => {
      lines.push({ level, message: String(message), fields: Object.assign({}, ...extra.filter(isObject)) });
    });
  }
  jest.spyOn(metrics, 'addMetric').mockImplementation((name, unit, value) => {
    points.push({ name, unit, value });
    return metrics;
  });
  // The flush at the end of each invocation would print EMF to stdout.
  jest.spyOn(metrics, 'publishStoredMetrics').mockImplementation(() => metrics);
  return { logger, metrics, tracer, lines, points, metricNames: () => points.map((p) => p.name) };
}

const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null;

/** A Lambda context for one invocation. */
export function lambdaContext(functionName: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:eu-west-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: '2026/03/01/[$LATEST]abcdef',
    getRemainingTimeInMillis: () => 30_000,
    done: quiet,
    fail: quiet,
    succeed: quiet,
  };
}

/** An HTTP API (payload format 2.0) request event. */
export function apiEvent(options: {
  method: string;
  routeKey: string;
  path: string;
  pathParameters?: Record<string, string>;
  headers?: Record<string, string>;
  body?: Buffer;
  base64?: boolean;
}): APIGatewayProxyEventV2 {
  const base64 = options.base64 ?? false;
  return {
    version: '2.0',
    routeKey: options.routeKey,
    rawPath: options.path,
    rawQueryString: '',
    headers: { host: 'abc123.execute-api.eu-west-1.amazonaws.com', ...options.headers },
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      domainName: 'abc123.execute-api.eu-west-1.amazonaws.com',
      domainPrefix: 'abc123',
      http: {
        method: options.method,
        path: options.path,
        protocol: 'HTTP/1.1',
        sourceIp: '192.0.2.1',
        userAgent: 'unit-test',
      },
      requestId: 'req-1',
      routeKey: options.routeKey,
      stage: '$default',
      time: '01/Mar/2026:12:00:00 +0000',
      timeEpoch: Date.parse('2026-03-01T12:00:00Z'),
    },
    ...(options.pathParameters === undefined ? {} : { pathParameters: options.pathParameters }),
    ...(options.body === undefined ? {} : { body: options.body.toString(base64 ? 'base64' : 'utf8') }),
    isBase64Encoded: base64,
  };
}

/** One SQS record as the event source mapping delivers it. */
export function sqsRecord(messageId: string, body: string, receiveCount = 1): SQSRecord {
  return {
    messageId,
    receiptHandle: `receipt-${messageId}`,
    body,
    attributes: {
      ApproximateReceiveCount: String(receiveCount),
      SentTimestamp: '1772366400000',
      SenderId: 'AIDAEXAMPLE',
      ApproximateFirstReceiveTimestamp: '1772366400001',
    },
    messageAttributes: {},
    md5OfBody: '0'.repeat(32),
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:docrelay-jobs',
    awsRegion: 'eu-west-1',
  };
}

/** An SQS event of these records. */
export const sqsEvent = (...records: SQSRecord[]): SQSEvent => ({ Records: records });
