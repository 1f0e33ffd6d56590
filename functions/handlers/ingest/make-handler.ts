/**
 * The ingest Lambda: `POST /v1/hooks/{integrationId}` answers a handshake, or verifies, records, queues and
 * answers (the integration's `respond` when set); GET only for schemes whose challenge uses it.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { type Observability, traced } from '../../commons/observability';
import { acceptWebhook, answerHandshake, type IngestDeps, webhookMethods } from '../../core/accept-delivery';
import { readApiRequest } from '../../http/api-event';
import { hookIntegrationId } from '../../http/hook-route';
import { jsonResponse, ProblemError } from '../../http/problem';
import { problemErrors } from '../../http/problem-middleware';
import { recordAccepted } from '../record-accepted';

const integrationOf = (event: unknown): Record<string, unknown> => {
  const id =
    typeof event === 'object' && event !== null ? hookIntegrationId(event as APIGatewayProxyEventV2) : '';
  return id === '' ? {} : { integration: id };
};

/** Builds the ingest handler (the Lambda entry and the local stack call this alike). */
export function makeIngestHandler(deps: IngestDeps, observability: Observability) {
  const { logger, metrics } = observability;
  const handle = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    const request = readApiRequest(event);
    const integrationId = hookIntegrationId(event);
    const methods = webhookMethods(deps, integrationId);
    if (!methods.includes(request.method)) {
      const detail = methods.length === 1 ? 'Webhooks are sent with POST.' : `Use ${methods.join(' or ')}.`;
      throw new ProblemError(405, 'method-not-allowed', 'Method not allowed', detail, {
        allow: methods.join(', '),
      });
    }
    const webhook = { integrationId, ...request };
    const handshake = await answerHandshake(deps, webhook);
    if (handshake !== undefined) {
      logger.info('handshake answered', { integration: integrationId, status: handshake.status });
      return {
        statusCode: handshake.status,
        headers: { 'content-type': handshake.contentType, ...handshake.headers },
        body: handshake.body,
      };
    }
    const accepted = await acceptWebhook(deps, webhook);
    recordAccepted(observability, 'delivery', integrationId, accepted.body);
    const respond = deps.config.integrations.get(integrationId)?.config.respond;
    if (respond !== undefined) {
      return {
        statusCode: respond.status,
        headers: { 'content-type': respond.contentType },
        body: respond.body,
      };
    }
    return jsonResponse(accepted.status, accepted.body);
  };
  return middy(handle)
    .use(traced(observability))
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
