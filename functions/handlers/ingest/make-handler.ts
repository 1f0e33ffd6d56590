/** The ingest Lambda: `POST /v1/hooks/{integrationId}` → verify, record, queue, answer. */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { Observability } from '../../commons/observability';
import { acceptWebhook, type IngestDeps } from '../../core/accept-delivery';
import { readApiRequest } from '../../http/api-event';
import { jsonResponse, ProblemError } from '../../http/problem';
import { problemErrors } from '../../http/problem-middleware';
import { recordAccepted } from '../record-accepted';

const integrationOf = (event: unknown): Record<string, unknown> => {
  const id = (event as APIGatewayProxyEventV2 | undefined)?.pathParameters?.integrationId;
  return id === undefined ? {} : { integration: id };
};

/** Builds the ingest handler (the Lambda entry and the local stack call this alike). */
export function makeIngestHandler(deps: IngestDeps, observability: Observability) {
  const { logger, metrics, tracer } = observability;
  const handle = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    const request = readApiRequest(event);
    if (request.method !== 'POST') {
      throw new ProblemError(
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
    const accepted = await acceptWebhook(deps, { integrationId, ...request });
    recordAccepted(observability, 'delivery', integrationId, accepted.body);
    return jsonResponse(accepted.status, accepted.body);
  };
  return middy(handle)
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics))
    .use(
      problemErrors(observability, {
        refused: 'delivery refused',
        failed: 'delivery failed',
        refusedMetric: 'DeliveriesRefused',
        failedMetric: 'IngestErrors',
        fields: integrationOf,
      }),
    );
}
