/**
 * The API calls' transport (functions/docgen/exchange.ts) against a real server on loopback: what it sends,
 * how it reads the answer, and that it fails rather than return part of a body. `fetchExchange` is run on the
 * same answers, so the two transports the client can use read them alike.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import {
  ExchangeBodyError,
  fetchExchange,
  type HttpExchange,
  nodeHttpExchange,
} from '../../../functions/docgen/exchange';

type Handler = (request: IncomingMessage, body: string, response: ServerResponse) => void;

let server: Server;
let handler: Handler;
let base: URL;

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handler(request, Buffer.concat(chunks).toString('utf8'), response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1.0/`);
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const call = (exchange: HttpExchange, path: string, init: { method?: 'GET' | 'POST'; body?: string } = {}) =>
  exchange(new URL(path, base), {
    method: init.method ?? 'GET',
    headers: { accept: 'application/json', 'x-api-key': 'key-1' },
    ...(init.body === undefined ? {} : { body: init.body }),
    signal: new AbortController().signal,
  });

const transports: Array<[string, HttpExchange]> = [
  ['node:http', nodeHttpExchange],
  ['fetch', fetchExchange(fetch)],
];

describe.each(transports)('%s exchange', (_name, exchange) => {
  it('sends the method, headers and body, and reads status, headers and text', async () => {
    let seen: { method?: string; headers?: IncomingMessage['headers']; body?: string } = {};
    handler = (request, body, response) => {
      seen = { method: request.method, headers: request.headers, body };
      response.writeHead(201, { 'content-type': 'application/json', 'x-thing': ['a', 'b'] });
      response.end('{"documentId":"d-1","name":"Zoë"}');
    };
    const body = JSON.stringify({ templateId: '9001', data: { name: 'Zoë' } });
    const answer = await call(exchange, 'documents', { method: 'POST', body });
    expect(seen.method).toBe('POST');
    expect(seen.body).toBe(body);
    expect(seen.headers?.['x-api-key']).toBe('key-1');
    expect(seen.headers?.['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(answer.status).toBe(201);
    expect(answer.header('content-type')).toBe('application/json');
    expect(answer.header('x-thing')).toBe('a, b');
    expect(answer.header('x-absent')).toBeUndefined();
    expect(answer.text).toBe('{"documentId":"d-1","name":"Zoë"}');
  });

  it('decodes UTF-8 split across chunks and drops a leading BOM', async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"€ and ü"}')]);
    handler = (_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      // The euro sign's three bytes arrive in two writes.
      const cut = bytes.indexOf(0xe2) + 1;
      response.write(bytes.subarray(0, cut));
      response.end(bytes.subarray(cut));
    };
    expect((await call(exchange, 'templates')).text).toBe('{"name":"€ and ü"}');
  });

  it('reads a gzip or brotli answer as its text', async () => {
    for (const [coding, pack] of [
      ['gzip', gzipSync],
      ['br', brotliCompressSync],
    ] as const) {
      handler = (_request, _body, response) => {
        response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding });
        response.end(pack(Buffer.from('{"value":[]}')));
      };
      expect((await call(exchange, 'templates')).text).toBe('{"value":[]}');
    }
  });

  it('returns a redirect as it is, without following it', async () => {
    let requests = 0;
    handler = (_request, _body, response) => {
      requests += 1;
      response.writeHead(302, { location: 'http://127.0.0.1:9/elsewhere' });
      response.end();
    };
    const answer = await call(exchange, 'templates');
    expect(answer.status).toBe(302);
    expect(answer.header('location')).toBe('http://127.0.0.1:9/elsewhere');
    expect(requests).toBe(1);
  });

  it('rejects an answer whose connection drops before the whole body', async () => {
    handler = (_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      response.write('{"value":', () => response.socket?.destroy());
    };
    await expect(call(exchange, 'templates')).rejects.toThrow();
  });

  it('rejects when aborted while the body is still arriving', async () => {
    const controller = new AbortController();
    let held: ServerResponse | undefined;
    handler = (_request, _body, response) => {
      held = response;
      response.writeHead(200, { 'content-type': 'application/json' });
      // Part of the body is on the wire; the abort comes once it is.
      response.write('{"value":[', () => controller.abort());
    };
    const answer = exchange(new URL('templates', base), {
      method: 'GET',
      headers: {},
      signal: controller.signal,
    });
    await expect(answer).rejects.toThrow();
    held?.end(']}');
  });
});

describe('node:http exchange', () => {
  it('asks for no content coding and refuses one it cannot read', async () => {
    let asked: string | undefined;
    handler = (request, _body, response) => {
      asked = request.headers['accept-encoding'];
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'zstd-ish' });
      response.end('{}');
    };
    await expect(call(nodeHttpExchange, 'templates')).rejects.toBeInstanceOf(ExchangeBodyError);
    expect(asked).toBe('identity');
  });
});
