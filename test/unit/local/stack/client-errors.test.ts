/**
 * The local API over a raw socket: what Node's HTTP parser refuses before any route sees it (a request line
 * or headers too large, bytes that are not HTTP) is answered as problem+json too, and the connection closed.
 */

import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { clientErrorAnswer, startApiServer } from '../../../../local/stack/api-server';

/** Writes raw bytes to the server and reads everything it answers until it closes the connection. */
async function rawExchange(bytes: string): Promise<{ status: number; headers: string; body: string }> {
  const api = await startApiServer({}, { port: 0 });
  try {
    const { port } = api.server.address() as AddressInfo;
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      socket.on('error', reject);
      socket.end(bytes);
    });
    const [head = '', body = ''] = text.split('\r\n\r\n');
    return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]), headers: head.toLowerCase(), body };
  } finally {
    await api.close();
  }
}

describe('requests the HTTP parser refuses', () => {
  it('answers a header section over the limit with 431 problem+json', async () => {
    const answer = await rawExchange(
      `GET /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Junk: ${'j'.repeat(64 * 1024)}\r\n\r\n`,
    );
    expect(answer.status).toBe(431);
    expect(answer.headers).toContain('content-type: application/problem+json');
    expect(answer.headers).toContain('connection: close');
    expect(JSON.parse(answer.body)).toEqual({
      type: 'urn:docrelay:problem:request-header-fields-too-large',
      title: 'Request header fields too large',
      status: 431,
      detail: expect.stringMatching(/^The request line and headers are limited to \d+ bytes\.$/),
    });
  });

  it('answers bytes that are not HTTP with 400 problem+json', async () => {
    const answer = await rawExchange('NOT HTTP AT ALL\r\n\r\n');
    expect(answer.status).toBe(400);
    expect(answer.headers).toContain('content-type: application/problem+json');
    expect(JSON.parse(answer.body)).toMatchObject({ type: 'urn:docrelay:problem:bad-request', status: 400 });
  });

  it("gives Node's own statuses for its other parser errors", () => {
    expect(clientErrorAnswer('HPE_CHUNK_EXTENSIONS_OVERFLOW').statusCode).toBe(413);
    expect(clientErrorAnswer('ERR_HTTP_REQUEST_TIMEOUT').statusCode).toBe(408);
    expect(clientErrorAnswer(undefined).statusCode).toBe(400);
  });
});
