/**
 * The local HTTP API: turns each request into the API Gateway HTTP API event (payload 2.0) the handlers get
 * on AWS and their answers back into HTTP, plus `GET /healthz` and `POST /_local/events/{integrationId}`.
 * Every error, down to a request Node's parser refuses, is answered as problem+json.
 */
import {
  createServer,
  type IncomingMessage,
  maxHeaderSize,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { LoadedConfig } from '../../functions/config/compile';
import { errorResponse, type HttpResponse, problemResponse } from '../../functions/http/problem';
import { readRoute, safeDecode, toApiGatewayEvent } from './api-gateway-event';
import { localContext } from './lambda-context';

/** A handler as the API calls it. */
export type ApiHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

/** A local-only route set (the console): answers a request, or undefined when the path is not its own. */
export type LocalRoutes = (request: LocalRequest) => Promise<HttpResponse | undefined>;

/** A request as the local routes see it (after the Host, Origin and content-type checks). */
export interface LocalRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly body: Buffer;
}

/**
 * The handlers behind the local API; each is optional (the `docrelay console` server has no webhooks).
 * `jobs` serves `GET /v1/jobs`, `/v1/jobs/{jobId}` and `/v1/deliveries/{deliveryId}`.
 */
export interface ApiRoutes {
  readonly ingest?: ApiHandler;
  readonly jobs?: ApiHandler;
  /** The state `/healthz` reports beyond the API's own (which answers, or nothing would). */
  readonly health?: () => LocalHealth;
  readonly putEvent?: (integrationId: string, event: unknown) => Promise<unknown>;
  /** The web console (its pages at `/` and `/console/*`, its actions at `/_console/*`). */
  readonly console?: LocalRoutes;
  /**
   * Hosts besides loopback that may reach the webhook URLs (`/v1/hooks/*`) only: those of the integrations'
   * `publicUrl`s (a local tunnel's), read on every request so a config reload applies. @default none
   */
  readonly publicHosts?: () => readonly string[];
}

/**
 * The hosts (`host[:port]`, as a Host header names them) of the integrations' `publicUrl`s: the only names
 * besides loopback the local API answers to, and only on its webhook URLs.
 */
export function publicUrlHosts(config: LoadedConfig): readonly string[] {
  let hosts = publicHostsOf.get(config);
  if (hosts === undefined) {
    const found = new Set<string>();
    for (const integration of config.integrations.values()) {
      const url = integration.config.publicUrl;
      if (url !== undefined) found.add(new URL(url).host.toLowerCase());
    }
    hosts = [...found];
    publicHostsOf.set(config, hosts);
  }
  return hosts;
}

/** publicUrlHosts per loaded config: asked on every request, it changes only with a reload. */
const publicHostsOf = new WeakMap<LoadedConfig, readonly string[]>();

/**
 * What the local stack's parts are doing. `restarting`: the workers' process ended unasked and is being
 * started again; webhooks are still accepted (they wait in the queue), but no job runs until it is back.
 */
export interface LocalHealth {
  readonly workers: 'running' | 'restarting';
}

/**
 * `GET /healthz`: 200 while every part runs, 503 while one is being started again (webhooks still accepted).
 * A server with no parts behind it (`docrelay console`) answers its own state only.
 */
export function healthAnswer(health: LocalHealth | undefined): HttpResponse {
  const ok = health === undefined || health.workers === 'running';
  const body = ok
    ? { status: 'ok', ...health }
    : {
        status: 'degraded',
        ...health,
        detail:
          "The workers' process is being started again: webhooks are accepted and queued, and no job runs until it is back.",
      };
  return {
    statusCode: ok ? 200 : 503,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
    body: JSON.stringify(body),
  };
}

/** API Gateway's own payload limit: larger requests never reach a Lambda. */
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

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

const problem = (status: number, slug: string, title: string, detail: string): HttpResponse =>
  problemResponse(status, slug, title, detail);

/** Local-only paths: what a web page must not reach (the console's actions, the events route). */
const isLocalOnly = (path: string): boolean => path.startsWith('/_local/') || path.startsWith('/_console/');

/** The webhook URLs: the only paths a public (tunnel) host may reach. */
const WEBHOOK_PATH = /^\/v1\/hooks\/[^/]+$/;

/**
 * Refuses what a web page in the developer's browser could send: a foreign Host (DNS rebinding) or Origin,
 * and a non-JSON POST on local-only routes. `publicHosts` reach the webhook URLs only, which verify every
 * delivery (docs/decisions.md, "The local API refuses what a browser page could send").
 */
export function refuseForeign(
  request: { method: string; path: string; headers: IncomingMessage['headers'] },
  own: { host: string; port: number },
  publicHosts: readonly string[] = [],
): HttpResponse | undefined {
  const hosts = new Set([`${own.host}:${own.port}`, `localhost:${own.port}`]);
  const host = (request.headers.host ?? '').toLowerCase();
  const tunnelled = WEBHOOK_PATH.test(request.path) && publicHosts.includes(host);
  if (!hosts.has(host) && !tunnelled) {
    return problem(
      421,
      'misdirected-request',
      'Misdirected request',
      publicHosts.includes(host)
        ? 'Through a publicUrl host only the webhook URLs (/v1/hooks/…) are served; the rest answers on loopback only.'
        : 'This server answers only to its own loopback address.',
    );
  }
  const origin = request.headers.origin;
  if (origin !== undefined && ![...hosts].some((allowed) => origin.toLowerCase() === `http://${allowed}`)) {
    return problem(403, 'foreign-origin', 'Foreign origin', 'Requests from other origins are refused.');
  }
  if (request.method !== 'GET' && request.method !== 'HEAD' && isLocalOnly(request.path)) {
    const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json') {
      return problem(415, 'unsupported-media-type', 'Unsupported media type', 'Send application/json.');
    }
  }
  return undefined;
}

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

/**
 * What Node's HTTP parser refused (no request object exists yet), as the statuses Node itself would give:
 * oversized request line or headers 431, oversized chunk extensions 413, a request too slow to arrive 408,
 * anything else that is not HTTP/1.1 400.
 */
export function clientErrorAnswer(code: string | undefined): HttpResponse {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return problem(
        431,
        'request-header-fields-too-large',
        'Request header fields too large',
        `The request line and headers are limited to ${maxHeaderSize} bytes.`,
      );
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return problem(413, 'payload-too-large', 'Payload too large', 'The chunk extensions are too large.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return problem(408, 'request-timeout', 'Request timeout', 'The request did not arrive in time.');
    default:
      return problem(400, 'bad-request', 'Bad request', 'The request is not valid HTTP/1.1.');
  }
}

/** Answers a parser error on the socket itself, as problem+json, then closes the connection. */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // A reset peer hears nothing; a response already under way cannot be followed by another.
  const inFlight =
    (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight) {
    socket.destroy();
    return;
  }
  const answer = clientErrorAnswer(error.code);
  const body = Buffer.from(answer.body, 'utf8');
  const head = [
    `HTTP/1.1 ${answer.statusCode} ${STATUS_CODES[answer.statusCode] ?? ''}`,
    ...Object.entries(answer.headers).map(([name, value]) => `${name}: ${value}`),
    `content-length: ${body.length}`,
    'connection: close',
    '',
    '',
  ].join('\r\n');
  socket.end(Buffer.concat([Buffer.from(head, 'latin1'), body]));
}

/** Starts the local API on `host:port` (port 0: any free port). */
export async function startApiServer(
  routes: ApiRoutes,
  options: { port: number; host?: string; onRequest?: (line: string) => void },
): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const host = options.host ?? '127.0.0.1';
  let port = 0;
  const server = createServer((request, response) => {
    const started = Date.now();
    void handle(routes, request, { host, port })
      .catch(() => problem(500, 'internal-error', 'Internal error', 'docrelay failed to handle the request.'))
      .then((result) => {
        send(response, result);
        options.onRequest?.(
          `${request.method} ${new URL(request.url ?? '/', 'http://localhost').pathname} ${result.statusCode} ${Date.now() - started}ms`,
        );
      });
  });
  server.keepAliveTimeout = 5000;
  // Without a listener Node answers a request it cannot parse with a bare status line and no body.
  server.on('clientError', answerClientError);
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
  port = (server.address() as AddressInfo).port;
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
  own: { host: string; port: number },
): Promise<HttpResponse | APIGatewayProxyStructuredResultV2> {
  const method = (request.method ?? 'GET').toUpperCase();
  const url = new URL(request.url ?? '/', 'http://localhost');
  const path = url.pathname;
  const refused = refuseForeign({ method, path, headers: request.headers }, own, routes.publicHosts?.());
  if (refused !== undefined) {
    request.resume();
    return refused;
  }
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
    if (method !== 'GET' && method !== 'HEAD') {
      return problemResponse(
        405,
        'method-not-allowed',
        'Method not allowed',
        'The health check is read with GET.',
        { allow: 'GET, HEAD' },
      );
    }
    return healthAnswer(routes.health?.());
  }
  if (routes.console !== undefined) {
    const answer = await routes.console({ method, path, query: url.searchParams, body });
    if (answer !== undefined) return answer;
  }
  const hook = /^\/v1\/hooks\/([^/]+)$/.exec(path);
  if (hook !== null && routes.ingest !== undefined) {
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
  const read = readRoute(path);
  if (read !== undefined && routes.jobs !== undefined) {
    const event = toApiGatewayEvent(base, body, {
      routeKey: `${method} ${read.routeKey}`,
      ...(read.pathParameters === undefined ? {} : { pathParameters: read.pathParameters }),
    });
    return routes.jobs(event, localContext('jobs-api', 10_000));
  }
  const events = /^\/_local\/events\/([^/]+)$/.exec(path);
  if (events !== null && method === 'POST' && routes.putEvent !== undefined) {
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
      // An event that does not fit EventBridge's shape is a refusal naming its first wrong field (400).
      return errorResponse(error);
    }
  }
  return problem(404, 'not-found', 'Not found', 'No such route.');
}
