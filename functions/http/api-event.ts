/** Reading an API Gateway HTTP API (payload format 2.0) request: raw body bytes, headers, query. */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/** The parts of a request docrelay reads. */
export interface ApiRequest {
  readonly method: string;
  /**
   * The public URL as the client addressed it, query exactly as sent: scheme (`x-forwarded-proto`, else
   * https), host, the stage when the path lacks it, path and query. API Gateway sets https; the local stack
   * sets the scheme it served unless a tunnel's header is there, so one code rebuilds the URL in both.
   */
  readonly url: string;
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
    url: requestUrl(event, headers),
    rawBody: event.isBase64Encoded ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8'),
    headers,
    query,
    pathParameters,
  };
}

/** The URL the client addressed (see ApiRequest.url); behind a proxy or custom domain set `publicUrl`. */
export function requestUrl(event: APIGatewayProxyEventV2, headers: Readonly<Record<string, string>>): string {
  // A proxy may list several protocols (`https, http`): the first is the client's.
  const forwarded = headers['x-forwarded-proto']?.split(',', 1)[0]?.trim().toLowerCase();
  const scheme = forwarded === 'http' || forwarded === 'https' ? forwarded : 'https';
  const host = headers.host ?? event.requestContext.domainName;
  const stage = event.requestContext.stage;
  const path = event.rawPath ?? event.requestContext.http.path;
  const staged =
    stage === undefined || stage === '' || stage === '$default' || path.startsWith(`/${stage}/`)
      ? path
      : `/${stage}${path}`;
  const query = event.rawQueryString ?? '';
  return `${scheme}://${host}${staged}${query === '' ? '' : `?${query}`}`;
}
