/**
 * The one middy `onError` middleware of the HTTP entry points: any error becomes its problem+json answer
 * (problem.ts), logged as a refusal (4xx, warn) or a failure (5xx, error, with its code only) and counted.
 */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MiddlewareObj } from '@middy/core';
import { DocrelayError } from '../commons/errors';
import type { Observability } from '../commons/observability';
import { errorResponse, type HttpResponse, isClientError } from './problem';

/** How an entry point names and counts its refusals and failures. */
export interface ProblemMiddlewareOptions {
  /** Log message of a refusal, e.g. `delivery refused`. */
  readonly refused: string;
  /** Log message of a failure, e.g. `delivery failed`. */
  readonly failed: string;
  /** Metric counting refusals. */
  readonly refusedMetric?: string;
  /** Metric counting failures. */
  readonly failedMetric?: string;
  /** Log fields of the request (ids only, never a payload or a secret). */
  readonly fields?: (event: unknown) => Record<string, unknown>;
}

/** Turns errors into problem+json answers; pass to `.use()` last, so it runs before the metrics flush. */
export function problemErrors<TEvent>(
  { logger, metrics }: Pick<Observability, 'logger' | 'metrics'>,
  options: ProblemMiddlewareOptions,
): MiddlewareObj<TEvent, HttpResponse> {
  return {
    onError: async (request) => {
      const { error } = request;
      const response = errorResponse(error);
      const fields = options.fields?.(request.event) ?? {};
      const code = error instanceof DocrelayError ? error.code : 'INTERNAL';
      if (isClientError(error)) {
        logger.warn(options.refused, { ...fields, status: response.statusCode, code });
        if (options.refusedMetric !== undefined)
          metrics.addMetric(options.refusedMetric, MetricUnit.Count, 1);
      } else {
        logger.error(options.failed, {
          ...fields,
          status: response.statusCode,
          code,
          error: error instanceof Error ? error.name : 'unknown',
        });
        if (options.failedMetric !== undefined) metrics.addMetric(options.failedMetric, MetricUnit.Count, 1);
      }
      request.response = response;
    },
  };
}
