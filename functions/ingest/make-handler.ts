/** The ingest Lambda: `POST /v1/hooks/{integrationId}` → verify, record, queue, answer. */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { DocrelayError } from '../commons/errors';
import type { Observability } from '../commons/observability';
import { readApiRequest } from '../http/api-event';
import { errorResponse, jsonResponse, ProblemError, problemResponse } from '../http/problem';
import type { Runtime, RuntimeSettings } from '../runtime/runtime';
import { SignatureError } from '../senders';
import { acceptWebhook, type IngestDeps } from './accept-delivery';
import { recordAccepted } from './record-accepted';

/**
 * The part of the runtime the ingest uses. A full `Runtime` is one (the local stack passes its own); the
 * Lambda entry builds only this, so the ingest bundle carries no S3, EventBridge or service client.
 */
export type IngestRuntime = Pick<Runtime, 'config' | 'secrets' | 'jobs' | 'queue'> & {
  readonly settings: Pick<RuntimeSettings, 'sealingSecretName'>;
};

/** What accepting a delivery takes from a runtime (webhooks and EventBridge events alike). */
export function ingestDeps(runtime: IngestRuntime): IngestDeps {
  return {
    config: runtime.config,
    secrets: runtime.secrets,
    jobs: runtime.jobs,
    queue: runtime.queue,
    sealingSecretName: runtime.settings.sealingSecretName,
  };
}

/** Builds the ingest handler from a runtime (the Lambda entry and the local stack call this alike). */
export function makeIngestHandler(runtime: IngestRuntime, observability: Observability) {
  const { logger, metrics, tracer } = observability;
  const deps = ingestDeps(runtime);
  const handle = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    const request = readApiRequest(event);
    if (request.method !== 'POST') {
      // Counted like any refusal (and it keeps the metrics middleware from warning on an empty flush).
      logger.warn('delivery refused', { status: 405, code: 'METHOD_NOT_ALLOWED' });
      metrics.addMetric('DeliveriesRefused', MetricUnit.Count, 1);
      return problemResponse(
        405,
        'method-not-allowed',
        'Method not allowed',
        'Webhooks are sent with POST.',
        {
          allow: 'POST',
        },
      );
    }
    const integrationId = request.pathParameters.integrationId ?? '';
    try {
      const accepted = await acceptWebhook(deps, { integrationId, ...request });
      recordAccepted(observability, 'delivery', integrationId, accepted.body);
      return jsonResponse(accepted.status, accepted.body);
    } catch (error) {
      const response = errorResponse(error);
      if (error instanceof ProblemError || error instanceof SignatureError) {
        logger.warn('delivery refused', {
          integration: integrationId,
          status: response.statusCode,
          code: error.code,
        });
        metrics.addMetric('DeliveriesRefused', MetricUnit.Count, 1);
      } else {
        logger.error('delivery failed', {
          integration: integrationId,
          code: error instanceof DocrelayError ? error.code : 'INTERNAL',
          error: error instanceof Error ? error.name : 'unknown',
        });
        metrics.addMetric('IngestErrors', MetricUnit.Count, 1);
      }
      return response;
    }
  };
  return middy(handle)
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics));
}
