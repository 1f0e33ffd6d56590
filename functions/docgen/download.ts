/**
 * Streams a generated file from its link, which carries its own token, so no API key is sent; every hop must
 * pass the download guard. One timer covers the wait for headers and each silence between chunks: a chunk
 * only notes the time, and the timer, when it fires, sleeps again for the rest.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { checkDownloadUrl, type DownloadPolicy } from './download-guard';
import {
  DocgenBadResponseError,
  DocgenDownloadCutError,
  type DocgenError,
  DocgenNetworkError,
} from './errors';
import { redactUrl } from './redact';
import { statusError, type TransportFailure, transportError } from './status-errors';
import type { DownloadResult } from './types';

/** Redirects a download follows at most. */
export const MAX_DOWNLOAD_REDIRECTS = 3;
/** Bytes of an error answer's body read for its message. */
const ERROR_TEXT_MAX = 16 * 1024;

/** An answer as a transport hands it over: status, headers and the body as a Node stream. */
export interface TransportResponse {
  readonly status: number;
  /** One response header by its lower-case name. */
  header(name: string): string | undefined;
  readonly body: Readable;
}

/** A GET without redirects: resolves with the answer's head, rejects on a transport failure or an abort. */
export type HttpGet = (
  url: URL,
  init: { readonly headers: Readonly<Record<string, string>>; readonly signal: AbortSignal },
) => Promise<TransportResponse>;

/** GET over node:http/node:https (the default transport). */
export const nodeHttpGet: HttpGet = (url, { headers, signal }) =>
  new Promise<TransportResponse>((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(url, { method: 'GET', headers, signal }, (response: IncomingMessage) => {
      resolve({
        status: response.statusCode ?? 0,
        header: (name) => {
          const value = response.headers[name];
          return Array.isArray(value) ? value.join(', ') : value;
        },
        body: response,
      });
    });
    request.once('error', reject);
    request.end();
  });

/** GET through a `fetch` implementation (redirects by hand), for callers that inject one. */
export function fetchGet(fetchImpl: typeof fetch): HttpGet {
  return async (url, { headers, signal }) => {
    const response = await fetchImpl(url.href, { method: 'GET', headers, redirect: 'manual', signal });
    return {
      status: response.status,
      header: (name) => response.headers.get(name) ?? undefined,
      body:
        response.body === null
          ? Readable.from([])
          : Readable.fromWeb(response.body as unknown as WebReadableStream<Uint8Array>),
    };
  };
}

/** What one download needs from the client. */
export interface DownloadContext {
  readonly get: HttpGet;
  readonly policy: DownloadPolicy;
  /** Headers phase, then the longest silence between chunks. */
  readonly timeoutMs: number;
  /** Values never to print (the API key; each hop's token parts are added). */
  readonly secrets: string[];
  /** The clock for `Retry-After` dates. */
  readonly now: () => number;
  readonly signal?: AbortSignal;
}

/**
 * One download attempt: follows redirects on allowed origins, then returns the streaming body, or throws the
 * client error for the answer (an expired link is `DOCGEN_LINK_EXPIRED`).
 */
export async function downloadOnce(start: URL, context: DownloadContext): Promise<DownloadResult> {
  let url = start;
  for (let hop = 0; ; hop++) {
    const exchange = new Exchange(url, context);
    const response = await exchange.open();
    const { status } = response;
    if (status >= 200 && status < 300) return exchange.stream(response);
    if (status >= 300 && status < 400 && status !== 304) {
      exchange.close(response);
      const location = response.header('location');
      if (location === undefined || location === '') {
        throw new DocgenBadResponseError(`download: HTTP ${status} from ${redactUrl(url)} has no Location`, {
          operation: 'download',
          status,
        });
      }
      if (hop === MAX_DOWNLOAD_REDIRECTS) {
        throw new DocgenBadResponseError(
          `download: more than ${MAX_DOWNLOAD_REDIRECTS} redirects from ${redactUrl(start)}; stopped`,
          { operation: 'download', status },
        );
      }
      url = checkDownloadUrl(location, context.policy, url.href);
      context.secrets.push(...tokenParts(url));
      continue;
    }
    const text = await exchange.readText(response);
    throw statusError(
      {
        operation: 'download',
        what: redactUrl(url),
        download: true,
        secrets: context.secrets,
        now: context.now(),
      },
      { status, header: (name) => response.header(name), text },
    );
  }
}

/** The parts of a link that are secret: its whole query, each longer parameter value, its fragment. */
export function tokenParts(url: URL): string[] {
  const parts: string[] = [];
  if (url.search.length > 1) parts.push(url.search.slice(1));
  for (const value of url.searchParams.values()) {
    if (value.length >= 8) parts.push(value, encodeURIComponent(value));
  }
  if (url.hash.length > 1) parts.push(url.hash.slice(1));
  return parts;
}

/** One request of a download: its abort controller, its idle timer and the caller's signal. */
class Exchange {
  private readonly controller = new AbortController();
  private failure: TransportFailure | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastActivity = 0;
  private readonly onCallerAbort = (): void => this.abort('abort');

  constructor(
    private readonly url: URL,
    private readonly context: DownloadContext,
  ) {}

  /** Sends the request (no API key) and waits for the answer's head within the timeout. */
  async open(): Promise<TransportResponse> {
    const { signal } = this.context;
    if (signal?.aborted) this.abort('abort');
    signal?.addEventListener('abort', this.onCallerAbort, { once: true });
    this.watch();
    try {
      const response = await this.context.get(this.url, {
        headers: { accept: '*/*' },
        signal: this.controller.signal,
      });
      this.touch();
      return response;
    } catch (error) {
      this.release();
      throw this.error(error);
    }
  }

  /** Hands the body over through a guard that maps its failures to client errors and feeds the idle timer. */
  stream(response: TransportResponse): DownloadResult {
    const source = response.body;
    const guard = new ActivityGuard(() => this.touch());
    source.once('error', (error) => guard.destroy(this.bodyError(error)));
    source.once('end', () => this.release());
    // A body that stops without an error (some transports) is a failure too, not a short success.
    source.once('close', () => {
      if (!source.readableEnded) guard.destroy(this.bodyError(new Error('the connection closed early')));
    });
    guard.once('close', () => {
      this.release();
      if (!source.destroyed) source.destroy();
    });
    // The idle timer aborts the request, and the transport destroys the body with an AbortError.
    source.pipe(guard);
    const length = Number(response.header('content-length') ?? Number.NaN);
    const contentLength = Number.isSafeInteger(length) && length >= 0 ? length : undefined;
    const chunked = /(^|,)\s*chunked\s*$/i.test(response.header('transfer-encoding') ?? '');
    return {
      body: guard,
      contentLength,
      framed: contentLength !== undefined || chunked,
      contentType: response.header('content-type'),
    };
  }

  /** Reads the start of an error answer's body for its message, then closes the exchange. */
  async readText(response: TransportResponse): Promise<string> {
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of response.body) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
        chunks.push(buffer);
        size += buffer.length;
        if (size >= ERROR_TEXT_MAX) break;
      }
    } catch {
      // The message is a courtesy: the status says what happened.
    }
    this.close(response);
    return Buffer.concat(chunks).subarray(0, ERROR_TEXT_MAX).toString('utf8');
  }

  /** Drops the answer (a redirect's or an error's body) and the timer. */
  close(response: TransportResponse): void {
    this.release();
    if (!response.body.destroyed) response.body.destroy();
  }

  /**
   * A failure while the body streams: a connection that broke off after the service answered is a cut
   * download, not the network being down; a timeout or the caller's abort stay as they are.
   */
  private bodyError(cause: unknown): DocgenError {
    const error = this.error(cause);
    return error instanceof DocgenNetworkError
      ? new DocgenDownloadCutError(error.message, { operation: 'download', cause })
      : error;
  }

  private error(cause: unknown): DocgenError {
    return transportError(
      'download',
      this.url,
      cause,
      this.failure ?? 'network',
      this.context.timeoutMs,
      this.context.secrets,
    );
  }

  private abort(failure: TransportFailure): void {
    this.failure ??= failure;
    this.controller.abort();
  }

  private touch(): void {
    this.lastActivity = Date.now();
  }

  /** One timer: when it fires it checks the time of the last activity and sleeps again for the rest. */
  private watch(): void {
    const { timeoutMs } = this.context;
    this.touch();
    const check = (): void => {
      const idle = Date.now() - this.lastActivity;
      if (idle >= timeoutMs) {
        this.timer = undefined;
        this.abort('timeout');
        return;
      }
      this.timer = setTimeout(check, timeoutMs - idle);
    };
    this.timer = setTimeout(check, timeoutMs);
  }

  private release(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.context.signal?.removeEventListener('abort', this.onCallerAbort);
  }
}

/** Passes chunks through untouched, noting each one's arrival. */
class ActivityGuard extends Transform {
  constructor(private readonly onChunk: () => void) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.onChunk();
    callback(null, chunk);
  }
}
