/**
 * Which integration a webhook request is for. The local API routes `/v1/hooks/{integrationId}` and passes the
 * id as a path parameter; on AWS each integration has a route of its own (`ANY /v1/hooks/<id>`), so the id is
 * the last segment of the route API Gateway matched (its route key, set by API Gateway, not by the client).
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

const HOOK_ROUTE = /^[A-Z]+ \/v1\/hooks\/([^/{}]+)$/;

/** The integration id of a webhook request; '' when neither the path parameter nor the route names one. */
export function hookIntegrationId(
  event: Pick<APIGatewayProxyEventV2, 'pathParameters' | 'routeKey'>,
): string {
  const given = event.pathParameters?.integrationId;
  if (given !== undefined) return given;
  return HOOK_ROUTE.exec(event.routeKey ?? '')?.[1] ?? '';
}
