/** Reading an API Gateway HTTP API (payload format 2.0) request: raw body bytes, headers, query. */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/** The parts of a request docrelay reads. */
export interface ApiRequest {
  readonly method: string;
  readonly rawBody: Buffer;
  /** Names lower-cased. */
  readonly headers: Record<string, string>;
  readonly query: Record<string, string>;
  readonly pathParameters: Record<string, string>;
}

/** Reads the request from an HTTP API event; the body as the bytes received (base64-decoded when flagged). */
export function readApiRequest(event: APIGatewayProxyEventV2): ApiRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined) headers[name.toLowerCase()] = value;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
    if (value !== undefined) query[name] = value;
  }
  const pathParameters: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.pathParameters ?? {})) {
    if (value !== undefined) pathParameters[name] = value;
  }
  const body = event.body ?? '';
  return {
    method: event.requestContext.http.method.toUpperCase(),
    rawBody: event.isBase64Encoded ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8'),
    headers,
    query,
    pathParameters,
  };
}
