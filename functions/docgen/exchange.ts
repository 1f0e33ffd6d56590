/**
 * The transport of the service's API calls: one request, its answer read whole. node:http(s) by default, as for
 * downloads, since a process's first `fetch` loads undici and each fetch call costs more (bench/analysis.md);
 * a `fetch` given to the client (tests, other runtimes) is used instead.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';

/** One API request. */
export interface ApiRequest {
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** Aborts the request and the reading of its answer (the client's timeout). */
  readonly signal: AbortSignal;
}

/** An API answer, its body decoded as UTF-8 text (a leading BOM dropped, as `Response.text()` does). */
export interface ApiResponse {
  readonly status: number;
  /** One header's value (lower-case name); repeated headers joined with ", ". */
  header(name: string): string | undefined;
  readonly text: string;
}

/** Sends one API request and reads its whole answer; rejects on a transport failure or an abort. */
export type HttpExchange = (url: URL, request: ApiRequest) => Promise<ApiResponse>;

/** Thrown when an answer's body ends early or is in an encoding that cannot be read. */
export class ExchangeBodyError extends Error {
  override name = 'ExchangeBodyError';
}

const utf8 = new TextDecoder('utf-8');

/** The body as sent: content codings undone (the request asks for none, but a server may still use one). */
function decoded(body: Buffer, coding: string | undefined): Buffer {
  switch ((coding ?? 'identity').trim().toLowerCase()) {
    case '':
    case 'identity':
      return body;
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(body);
    case 'deflate':
      return inflateSync(body);
    case 'br':
      return brotliDecompressSync(body);
    default:
      throw new ExchangeBodyError(`the answer's content-encoding "${coding}" is not supported`);
  }
}

/** One API call over node:http (http: URLs) or node:https, on the default keep-alive agents. */
export const nodeHttpExchange: HttpExchange = (url, { method, headers, body, signal }) =>
  new Promise<ApiResponse>((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const sent = {
      'accept-encoding': 'identity',
      ...headers,
      ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body, 'utf8')) }),
    };
    const request = send(url, { method, headers: sent, signal }, (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('error', reject);
      response.once('end', () => {
        try {
          const text = utf8.decode(decoded(Buffer.concat(chunks), response.headers['content-encoding']));
          resolve({
            status: response.statusCode ?? 0,
            header: (name) => {
              const value = response.headers[name.toLowerCase()];
              return Array.isArray(value) ? value.join(', ') : value;
            },
            text,
          });
        } catch (error) {
          reject(error instanceof ExchangeBodyError ? error : new ExchangeBodyError(String(error)));
        }
      });
      // Closed before its end (the connection dropped, or the timeout aborted the request mid-body).
      response.once('close', () => {
        if (!response.complete)
          reject(new ExchangeBodyError('the answer ended before its whole body arrived'));
      });
    });
    request.once('error', reject);
    request.end(body);
  });

/** The same through a `fetch` implementation, without following redirects (as node:http does not). */
export function fetchExchange(fetchImpl: typeof fetch): HttpExchange {
  return async (url, { method, headers, body, signal }) => {
    const response = await fetchImpl(url.href, { method, headers, body, redirect: 'manual', signal });
    const text = await response.text();
    return { status: response.status, header: (name) => response.headers.get(name) ?? undefined, text };
  };
}
