/** Powertools Logger, Metrics and (when tracing is on) Tracer for one function, created once per container. */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { MiddlewareObj } from '@middy/core';

/** Namespace of docrelay's CloudWatch metrics when the deployment names none (the local stack, tests). */
export const METRICS_NAMESPACE = 'docrelay';

/** The observability tools of one function. */
export interface Observability {
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Present only when tracing is on. */
  readonly tracer?: Tracer;
}

/** Log levels Powertools' Logger takes. */
export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT';

/** Options of `createObservability`. */
export interface ObservabilityOptions {
  readonly logLevel?: LogLevel;
  readonly metricsNamespace?: string;
  readonly serviceName?: string;
  /** Load the X-Ray Tracer (the construct's `tracing`). @default false */
  readonly tracing?: boolean;
}

/**
 * The Powertools Tracer, required only when tracing is on: its X-Ray SDK's async hooks slow every promise even
 * with tracing disabled, and its module init is costly. `require()` keeps ./tracer bundled but unevaluated.
 */
function loadTracer(serviceName: string): Tracer {
  const { createTracer } = require('./tracer') as typeof import('./tracer');
  return createTracer(serviceName);
}

/**
 * Creates the tools for a function (`ingest`, `worker`, …). The log level is Powertools' own setting
 * (`POWERTOOLS_LOG_LEVEL`) unless given; the local stack gives one. On AWS the deployment's metric namespace
 * and service name come from the Lambda settings (the construct sets them per deployment).
 */
export function createObservability(functionName: string, options: ObservabilityOptions = {}): Observability {
  const serviceName = options.serviceName ?? `docrelay-${functionName}`;
  return {
    logger: new Logger({
      serviceName,
      ...(options.logLevel === undefined ? {} : { logLevel: options.logLevel }),
    }),
    metrics: new Metrics({ namespace: options.metricsNamespace ?? METRICS_NAMESPACE, serviceName }),
    ...(options.tracing === true ? { tracer: loadTracer(serviceName) } : {}),
  };
}

/** The observability options a Lambda's settings carry (its deployment's metric namespace, service, tracing). */
export const observed = (settings: {
  readonly metricsNamespace?: string;
  readonly serviceName?: string;
  readonly tracing?: boolean;
}): ObservabilityOptions => ({
  ...(settings.metricsNamespace === undefined ? {} : { metricsNamespace: settings.metricsNamespace }),
  ...(settings.serviceName === undefined ? {} : { serviceName: settings.serviceName }),
  ...(settings.tracing === true ? { tracing: true } : {}),
});

/**
 * The handler segment's middleware when tracing is on (none otherwise), for `middy(...).use(...)`. The
 * response is not recorded: it can hold a job's data.
 */
export function traced(observability: Observability): MiddlewareObj[] {
  const { tracer } = observability;
  return tracer === undefined ? [] : [captureLambdaHandler(tracer, { captureResponse: false })];
}
