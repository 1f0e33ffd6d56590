/** Powertools Logger, Metrics and Tracer for one function, created once per container. */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';

/** Namespace of docrelay's CloudWatch metrics when the deployment names none (the local stack, tests). */
export const METRICS_NAMESPACE = 'docrelay';

/** The observability tools of one function. */
export interface Observability {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly tracer: Tracer;
}

/** Log levels Powertools' Logger takes. */
export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT';

/**
 * Creates the tools for a function (`ingest`, `worker`, …). The log level is Powertools' own setting
 * (`POWERTOOLS_LOG_LEVEL`) unless given; the local stack gives one. On AWS the deployment's metric namespace
 * and service name come from the Lambda settings (the construct sets them per deployment).
 */
export function createObservability(
  functionName: string,
  options: { logLevel?: LogLevel; metricsNamespace?: string; serviceName?: string } = {},
): Observability {
  const serviceName = options.serviceName ?? `docrelay-${functionName}`;
  return {
    logger: new Logger({
      serviceName,
      ...(options.logLevel === undefined ? {} : { logLevel: options.logLevel }),
    }),
    metrics: new Metrics({ namespace: options.metricsNamespace ?? METRICS_NAMESPACE, serviceName }),
    tracer: new Tracer({ serviceName }),
  };
}

/** The observability options a Lambda's settings carry (its deployment's metric namespace, its service). */
export const observed = (settings: {
  readonly metricsNamespace?: string;
  readonly serviceName?: string;
}): { metricsNamespace?: string; serviceName?: string } => ({
  ...(settings.metricsNamespace === undefined ? {} : { metricsNamespace: settings.metricsNamespace }),
  ...(settings.serviceName === undefined ? {} : { serviceName: settings.serviceName }),
});
