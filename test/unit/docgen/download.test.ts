import { DocgenClient, type DocgenClientOptions, staticApiKey } from '../../../functions/docgen/client';
import { type FakeService, failure, readAll, startFakeService } from '../../helpers/fake-service';

const KEY = 'download-test-key-42';

let service: FakeService;
let other: FakeService;
let slept: number[];

beforeEach(async () => {
  service = await startFakeService();
  other = await startFakeService();
  slept = [];
});

afterEach(async () => {
  await service.close();
  await other.close();
});

function client(overrides: Partial<DocgenClientOptions> = {}): DocgenClient {
  return new DocgenClient({
    baseUrl: service.url,
    apiKey: staticApiKey(KEY),
    sleep: async (ms) => {
      slept.push(ms);
    },
    random: () => 0.5,
    ...overrides,
  });
}

describe('download', () => {
  it('streams the file with its length and type, and sends no API key', async () => {
    service.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '11' });
      res.end('hello world');
    });
    const result = await client().download({
      id: 'f1',
      filename: 'a.txt',
      mimeType: 'text/plain',
      size: 11,
      downloadUrl: `${service.url}/files/f1?ver=1&token=tok-abcdefgh`,
    });
    expect(result.contentLength).toBe(11);
    expect(result.framed).toBe(true);
    expect(result.contentType).toBe('text/plain');
    expect((await readAll(result.body)).toString()).toBe('hello world');
    expect(service.requests).toHaveLength(1);
    expect(service.requests[0]?.url).toBe('/files/f1?ver=1&token=tok-abcdefgh');
    expect(service.requests[0]?.headers).not.toHaveProperty('x-api-key');
  });

  it('hands over the body before the service has finished sending it (no buffering)', async () => {
    let finish: (() => void) | undefined;
    service.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write('first-chunk');
      finish = () => res.end('-rest');
    });
    const { body } = await client().download(`${service.url}/files/big?token=abc`);
    const first = await new Promise<string>((resolve) =>
      body.once('data', (c: Buffer) => resolve(c.toString())),
    );
    expect(first).toBe('first-chunk');
    expect(finish).toBeDefined();
    finish?.();
    body.resume();
    await new Promise((resolve) => body.once('end', resolve));
  });

  it('refuses a link on a foreign origin without requesting it', async () => {
    const error = await failure(client().download(`${other.url}/files/f1?token=t`));
    expect(error).toMatchObject({ code: 'DOCGEN_DOWNLOAD_ORIGIN_REFUSED', retryable: false });
    expect(other.requests).toHaveLength(0);
  });

  it('follows a link on a configured download origin', async () => {
    other.handle((_req, res) => {
      res.end('from storage');
    });
    const result = await client({ downloadOrigins: [`${other.url}/`] }).download(
      `${other.url}/files/f1?token=t`,
    );
    expect((await readAll(result.body)).toString()).toBe('from storage');
  });

  it('refuses plain http when insecure downloads are off, and by default for a non-local service', async () => {
    const strict = client({ allowInsecureDownloads: false });
    expect(await failure(strict.download(`${service.url}/files/f1?token=t`))).toMatchObject({
      code: 'DOCGEN_DOWNLOAD_ORIGIN_REFUSED',
    });
    const remote = new DocgenClient({ baseUrl: 'http://docgen.invalid', apiKey: staticApiKey(KEY) });
    expect(await failure(remote.download('http://docgen.invalid/files/f1?token=t'))).toMatchObject({
      code: 'DOCGEN_DOWNLOAD_ORIGIN_REFUSED',
    });
    expect(service.requests).toHaveLength(0);
  });

  it('follows a redirect that stays on an allowed origin, still without the key', async () => {
    service.handle((req, res) => {
      if (req.url.startsWith('/files/')) {
        res.writeHead(302, { location: `${other.url}/blob/1?sig=zzz` });
        res.end();
      }
    });
    other.handle((_req, res) => {
      res.end('redirected');
    });
    const result = await client({ downloadOrigins: [other.url] }).download(`${service.url}/files/1?token=t`);
    expect((await readAll(result.body)).toString()).toBe('redirected');
    expect(other.requests[0]?.headers).not.toHaveProperty('x-api-key');
  });

  it('refuses a redirect to a foreign origin, without following it', async () => {
    service.handle((_req, res) => {
      res.writeHead(307, { location: `${other.url}/steal` });
      res.end();
    });
    const error = await failure(client().download(`${service.url}/files/1?token=t`));
    expect(error.code).toBe('DOCGEN_DOWNLOAD_ORIGIN_REFUSED');
    expect(other.requests).toHaveLength(0);
  });

  it('stops after 3 redirects', async () => {
    let hop = 0;
    service.handle((_req, res) => {
      hop++;
      res.writeHead(302, { location: `/files/hop-${hop}` });
      res.end();
    });
    const error = await failure(client().download(`${service.url}/files/0?token=t`));
    expect(error.code).toBe('DOCGEN_BAD_RESPONSE');
    expect(service.requests).toHaveLength(4);
  });

  it.each([404, 410, 403])('reports HTTP %i as DOCGEN_LINK_EXPIRED, without retrying', async (status) => {
    service.handle((_req, res) => {
      res.writeHead(status);
      res.end('The file has been removed');
    });
    const error = await failure(client().download(`${service.url}/files/1?token=t`));
    expect(error).toMatchObject({ code: 'DOCGEN_LINK_EXPIRED', status, retryable: false, attempts: 1 });
    expect(service.requests).toHaveLength(1);
  });

  it('retries a 5xx download and then streams the file', async () => {
    let n = 0;
    service.handle((_req, res) => {
      n++;
      if (n === 1) {
        res.writeHead(503, { 'retry-after': '1' });
        res.end();
      } else {
        res.end('ok');
      }
    });
    const result = await client().download(`${service.url}/files/1?token=t`);
    expect((await readAll(result.body)).toString()).toBe('ok');
    expect(service.requests).toHaveLength(2);
    expect(slept).toEqual([1000]);
  });

  it('exposes contentLength so that a truncated body can be detected', async () => {
    service.handle((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('x'.repeat(40));
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const result = await client().download(`${service.url}/files/1?token=t`);
    expect(result.contentLength).toBe(100);
    let received = 0;
    let failed: unknown;
    try {
      for await (const chunk of result.body) received += (chunk as Buffer).length;
    } catch (error) {
      failed = error;
    }
    expect(received).toBe(40);
    expect(failed).toMatchObject({ code: 'DOCGEN_DOWNLOAD_CUT', retryable: true });
  });

  it('says a chunked body is framed: a cut fails it, though no length came', async () => {
    service.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write('x'.repeat(40), () => res.socket?.destroy());
    });
    const result = await client().download(`${service.url}/files/1?token=t`);
    expect(result).toMatchObject({ contentLength: undefined, framed: true });
    let failed: unknown;
    try {
      for await (const _chunk of result.body);
    } catch (error) {
      failed = error;
    }
    expect(failed).toMatchObject({ code: 'DOCGEN_DOWNLOAD_CUT', retryable: true });
  });

  it('says a body that ends with its connection (no length, not chunked) is not framed', async () => {
    service.handle((_req, res) => {
      // Written by hand: Node's server would frame it.
      res.socket?.end(
        'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nuntil the end',
      );
    });
    const result = await client().download(`${service.url}/files/1?token=t`);
    expect(result).toMatchObject({ contentLength: undefined, framed: false });
    expect((await readAll(result.body)).toString()).toBe('until the end');
  });

  it('gives up on a body that stops sending for longer than the timeout', async () => {
    service.handle((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
    });
    const result = await client({ timeoutMs: 100 }).download(`${service.url}/files/1?token=t`);
    await expect(readAll(result.body)).rejects.toMatchObject({ code: 'DOCGEN_TIMEOUT' });
  });

  it('stops when the caller aborts', async () => {
    service.handle(() => {
      // Never answers.
    });
    const controller = new AbortController();
    const pending = client().download(`${service.url}/files/1?token=t`, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    expect(await failure(pending)).toMatchObject({ code: 'DOCGEN_ABORTED', retryable: false });
  });
});
