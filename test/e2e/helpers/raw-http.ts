/** One HTTP request written as the test says, over node:http: for Host, Origin and odd headers a client would not send. */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

/** A request written exactly as it goes on the wire. */
export interface RawRequest {
  readonly method?: string;
  /** Path and query, sent as is (no normalisation, no re-encoding). */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  readonly body?: Buffer;
}

/** An HTTP answer. */
export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

/** Sends one request over node:http (no default headers beyond host and content-length); 10 s at most. */
export function rawRequest(baseUrl: string, req: RawRequest, timeoutMs = 10_000): Promise<RawResponse> {
  const base = new URL(baseUrl);
  return new Promise((resolvePromise, reject) => {
    // Null prototype: a header named `__proto__` must be sent, not swallowed by the prototype setter.
    const headers: Record<string, string | string[]> = Object.create(null) as Record<
      string,
      string | string[]
    >;
    for (const [name, value] of Object.entries(req.headers ?? {})) {
      headers[name] = typeof value === 'string' ? value : [...value];
    }
    if (req.body !== undefined) headers['content-length'] = String(req.body.length);
    const outgoing = httpRequest(
      {
        host: base.hostname,
        port: base.port,
        method: req.method ?? 'POST',
        path: req.path,
        headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolvePromise({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    outgoing.setTimeout(timeoutMs, () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}

/** A request's status and text, with the headers given (Host and Origin included, as a page or a tunnel sends them). */
export async function rawText(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = '',
): Promise<{ status: number; body: string }> {
  const answer = await rawRequest(baseUrl, { method, path, headers, body: Buffer.from(body) });
  return { status: answer.status, body: answer.text };
}
