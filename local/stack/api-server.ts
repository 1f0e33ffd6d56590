/**
 * The local HTTP API: turns each request into the API Gateway HTTP API event (payload format 2.0) that the
 * same Lambda handlers get on AWS, and their answers back into HTTP. Routes as on AWS, plus `GET /healthz` and
 * the local-only `POST /_local/events/{integrationId}` that `docrelay put-event` uses to feed the event path.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { localContext } from './lambda-context';

/** A handler as the API calls it. */
export type ApiHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

/** The handlers behind the local API. */
export interface ApiRoutes {
  readonly ingest: ApiHandler;
  readonly jobs: ApiHandler;
  readonly putEvent: (integrationId: string, event: unknown) => Promise<unknown>;
}

/** API Gateway's own payload limit: larger requests never reach a Lambda. */
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

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
function safeDecode(segment: string): string | undefined {
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

function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) {
        resolve(undefined);
        request.resume();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(size > MAX_REQUEST_BYTES ? undefined : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

const problem = (
  status: number,
  slug: string,
  title: string,
  detail: string,
): APIGatewayProxyStructuredResultV2 => ({
  statusCode: status,
  headers: { 'content-type': 'application/problem+json' },
  body: JSON.stringify({ type: `urn:docrelay:problem:${slug}`, title, status, detail }),
});

function send(response: ServerResponse, result: APIGatewayProxyStructuredResultV2): void {
  const body =
    result.body === undefined
      ? Buffer.alloc(0)
      : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
  const headers: Record<string, string> = { 'content-length': String(body.length) };
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  response.writeHead(result.statusCode ?? 200, headers);
  response.end(body);
}

/** Starts the local API on `host:port` (port 0: any free port). */
export async function startApiServer(
  routes: ApiRoutes,
  options: { port: number; host?: string; onRequest?: (line: string) => void },
): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const started = Date.now();
    void handle(routes, request)
      .catch(() => problem(500, 'internal-error', 'Internal error', 'docrelay failed to handle the request.'))
      .then((result) => {
        send(response, result);
        options.onRequest?.(
          `${request.method} ${new URL(request.url ?? '/', 'http://localhost').pathname} ${result.statusCode} ${Date.now() - started}ms`,
        );
      });
  });
  server.keepAliveTimeout = 5000;
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(
              `port ${options.port} on ${host} is in use: stop what listens there, or set PORT to another port`,
            )
          : error,
      ),
    );
    server.listen(options.port, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function handle(
  routes: ApiRoutes,
  request: IncomingMessage,
): Promise<APIGatewayProxyStructuredResultV2> {
  const method = (request.method ?? 'GET').toUpperCase();
  const path = new URL(request.url ?? '/', 'http://localhost').pathname;
  const body = await readBody(request);
  if (body === undefined) {
    return problem(
      413,
      'payload-too-large',
      'Payload too large',
      `Requests are limited to ${MAX_REQUEST_BYTES} bytes.`,
    );
  }
  const base = {
    method,
    url: request.url ?? '/',
    headers: request.headers,
    remoteAddress: request.socket.remoteAddress,
  };
  if (path === '/healthz') {
    return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{"status":"ok"}' };
  }
  const hook = /^\/v1\/hooks\/([^/]+)$/.exec(path);
  if (hook !== null) {
    const integrationId = safeDecode(hook[1] as string);
    if (integrationId === undefined)
      return problem(
        404,
        'unknown-integration',
        'Unknown integration',
        'No integration is configured at this URL.',
      );
    const event = toApiGatewayEvent(base, body, {
      routeKey: `${method} /v1/hooks/{integrationId}`,
      pathParameters: { integrationId },
    });
    return routes.ingest(event, localContext('ingest', 10_000));
  }
  const job = /^\/v1\/jobs\/([^/]+)$/.exec(path);
  if (job !== null) {
    const event = toApiGatewayEvent(base, body, {
      routeKey: `${method} /v1/jobs/{jobId}`,
      pathParameters: { jobId: safeDecode(job[1] as string) ?? '' },
    });
    return routes.jobs(event, localContext('jobs-api', 10_000));
  }
  const events = /^\/_local\/events\/([^/]+)$/.exec(path);
  if (events !== null && method === 'POST') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return problem(400, 'malformed-body', 'Malformed body', 'The event is not valid JSON.');
    }
    try {
      const result = await routes.putEvent(safeDecode(events[1] as string) ?? '', parsed);
      return {
        statusCode: 202,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(result),
      };
    } catch (error) {
      const status =
        typeof (error as { status?: unknown }).status === 'number'
          ? (error as { status: number }).status
          : 400;
      const detail =
        error instanceof Error ? (error.message.split('\n')[0] ?? 'invalid event') : 'invalid event';
      return problem(status, 'invalid-event', 'Event not accepted', detail);
    }
  }
  return problem(404, 'not-found', 'Not found', 'No such route.');
}
