/**
 * API Gateway's side of the local API: the HTTP API event (payload format 2.0) a request becomes, and the
 * routes it matches, as the deployed API builds and matches them.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

/**
 * The scheme this server serves. API Gateway tells the Lambda its own (`x-forwarded-proto: https`); this
 * server tells the scheme it really served, so a sender that signs the URL (Twilio, Square, HubSpot) verifies
 * against `http://127.0.0.1:PORT/...`. A request that carries its own (a tunnel such as ngrok sets it) keeps it.
 */
const SERVED_SCHEME = 'http';

const TEXT_TYPES = /^(text\/|application\/(json|[a-z.+-]*\+json|xml|x-www-form-urlencoded|javascript))/i;

/** Builds the API Gateway v2 event for a request, as the HTTP API would. */
export function toApiGatewayEvent(
  request: { method: string; url: string; headers: IncomingMessage['headers']; remoteAddress?: string },
  body: Buffer,
  route: { routeKey: string; pathParameters?: Record<string, string> },
): APIGatewayProxyEventV2 {
  const url = new URL(request.url, 'http://localhost');
  const headerMap = new Map<string, string>();
  const cookies: string[] = [];
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    // The HTTP API passes each cookie as one entry of `cookies`, never the Cookie header itself.
    if (name === 'cookie') {
      for (const line of Array.isArray(value) ? value : [value])
        cookies.push(
          ...line
            .split(';')
            .map((cookie) => cookie.trim())
            .filter((cookie) => cookie !== ''),
        );
    } else headerMap.set(name.toLowerCase(), Array.isArray(value) ? value.join(',') : value);
  }
  if (!headerMap.has('x-forwarded-proto')) headerMap.set('x-forwarded-proto', SERVED_SCHEME);
  // Maps, then own properties: a name like `constructor` or `__proto__` is a parameter like any other.
  const headers: Record<string, string> = Object.fromEntries(headerMap);
  const queryMap = new Map<string, string>();
  for (const [name, value] of url.searchParams) {
    const seen = queryMap.get(name);
    queryMap.set(name, seen === undefined ? value : `${seen},${value}`);
  }
  const query: Record<string, string> = Object.fromEntries(queryMap);
  // Like the HTTP API: text bodies as text, anything else (or text that is not valid UTF-8) base64-encoded.
  const textual = TEXT_TYPES.test(headers['content-type'] ?? '') && isValidUtf8(body);
  const now = new Date();
  return {
    version: '2.0',
    routeKey: route.routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...(cookies.length > 0 ? { cookies } : {}),
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    ...(route.pathParameters === undefined ? {} : { pathParameters: route.pathParameters }),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method: request.method,
        path: url.pathname,
        protocol: 'HTTP/1.1',
        sourceIp: request.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: route.routeKey,
      stage: '$default',
      time: requestTime(now),
      timeEpoch: now.getTime(),
    },
    ...(body.length > 0 ? { body: textual ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: body.length > 0 && !textual,
  };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** API Gateway's `requestContext.time`: the common log format in UTC, e.g. `12/Mar/2020:19:03:58 +0000`. */
function requestTime(at: Date): string {
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(at.getUTCDate())}/${MONTHS[at.getUTCMonth()]}/${at.getUTCFullYear()}:${two(at.getUTCHours())}:${two(at.getUTCMinutes())}:${two(at.getUTCSeconds())} +0000`;
}

/** Decodes a path segment; undefined for malformed percent-encoding (answered 404, never 500). */
export function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function isValidUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The read routes of the jobs API, as API Gateway matches them. */
export function readRoute(
  path: string,
): { routeKey: string; pathParameters?: Record<string, string> } | undefined {
  if (path === '/v1/jobs') return { routeKey: '/v1/jobs' };
  const job = /^\/v1\/jobs\/([^/]+)$/.exec(path);
  if (job !== null) {
    return { routeKey: '/v1/jobs/{jobId}', pathParameters: { jobId: safeDecode(job[1] as string) ?? '' } };
  }
  const delivery = /^\/v1\/deliveries\/([^/]+)$/.exec(path);
  if (delivery !== null) {
    return {
      routeKey: '/v1/deliveries/{deliveryId}',
      pathParameters: { deliveryId: safeDecode(delivery[1] as string) ?? '' },
    };
  }
  return undefined;
}
