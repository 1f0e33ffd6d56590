/**
 * A recording reverse proxy on loopback in front of the service emulator, for the secrets suite: docrelay
 * talks to the proxy as its service (DOCGEN_BASE_URL), and the emulator writes the proxy's URL in its
 * download links (`publicUrl`), so every download goes through it too. The proxy keeps the download tokens it
 * sees (in create-document answers and in download requests): values that must never appear in docrelay's
 * logs, records or metadata, and that nothing else exposes (the emulator's stats leave query strings out).
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running recording proxy. */
export interface RecordingProxy {
  readonly url: string;
  /** Points the proxy at its upstream (the emulator, started once the proxy's URL is known). */
  setUpstream(url: string): void;
  /** Every download token seen, in answers and in requests. */
  readonly tokens: Set<string>;
  /** Every answer body of the service API the proxy relayed (not downloads), as text. */
  readonly answers: string[];
  close(): Promise<void>;
}

const TOKEN = /[?&]token=([^&"\s]+)/g;
/** Answers kept at most (each create-document answer is small). */
const MAX_ANSWERS = 1_000;

// Hop-by-hop headers belong to one connection; host names the proxy.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'host',
  'te',
  'trailer',
]);

function forwardedHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
}

/** Starts the proxy on 127.0.0.1 and a free port. */
export async function startRecordingProxy(): Promise<RecordingProxy> {
  let upstream: URL | undefined;
  const tokens = new Set<string>();
  const answers: string[] = [];
  const keepTokens = (text: string): void => {
    for (const match of text.matchAll(TOKEN)) tokens.add(decodeURIComponent(match[1] as string));
  };
  const server: Server = createServer((req, res) => {
    if (upstream === undefined) {
      res.writeHead(503).end();
      return;
    }
    const isDownload = (req.url ?? '').startsWith('/download');
    if (isDownload) keepTokens(req.url ?? '');
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: forwardedHeaders(req.headers),
        agent: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, forwardedHeaders(answer.headers));
        if (isDownload) {
          answer.pipe(res);
          return;
        }
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const body = Buffer.concat(chunks);
          const text = body.toString('utf8');
          keepTokens(text);
          if (answers.length < MAX_ANSWERS) answers.push(text);
          res.end(body);
        });
      },
    );
    forward.setTimeout(30_000, () => forward.destroy());
    forward.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    setUpstream: (url) => {
      const next = new URL(url);
      if (next.port === String(port)) throw new Error('the proxy cannot be its own upstream');
      upstream = next;
    },
    tokens,
    answers,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
