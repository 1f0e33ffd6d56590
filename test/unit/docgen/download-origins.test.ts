/**
 * The download link is fetched only over HTTPS on AWS and only from allowed origins; redirects are not
 * followed off those origins. test/unit/docgen/download.test.ts covers the basic cases (foreign
 * origin, configured origin, plain http off, a foreign redirect, the redirect cap); this file adds the
 * bypasses an attacker controlling a service answer would try: credentials in the URL, protocol-relative and
 * non-HTTP redirects, another port of the same host, a downgrade to http, look-alike loopback hosts, and the
 * service client the worker builds from an https config. Loopback fake servers where plain http will do;
 * an injected fetch (no network at all) for the https service of an AWS deployment.
 */

import { parseConfig } from '../../../functions/config/load';
import { DocgenClient, type DocgenClientOptions, staticApiKey } from '../../../functions/docgen/client';
import { buildDocumentService } from '../../../functions/wiring/document-service';
import { type FakeService, failure, startFakeService } from '../../helpers/fake-service';

const KEY = 'security-download-key-0123456789';

const noWait = async (): Promise<void> => undefined;

describe('download links against a loopback service', () => {
  let service: FakeService;
  let other: FakeService;

  beforeEach(async () => {
    service = await startFakeService();
    other = await startFakeService();
  });

  afterEach(async () => {
    await service.close();
    await other.close();
  });

  const client = (overrides: Partial<DocgenClientOptions> = {}): DocgenClient =>
    new DocgenClient({ baseUrl: service.url, apiKey: staticApiKey(KEY), sleep: noWait, ...overrides });

  it('refuses a link with credentials in it, on the service origin, without requesting it', async () => {
    const withUser = service.url.replace('http://', 'http://attacker:pw@');
    const error = await failure(client().download(`${withUser}/download?token=t`));
    expect(error.code).toBe('DOCGEN_DOWNLOAD_ORIGIN_REFUSED');
    expect(service.requests).toHaveLength(0);
  });

  it('refuses a link on another port of the same host', async () => {
    const error = await failure(client().download(`${other.url}/download?token=t`));
    expect(error.code).toBe('DOCGEN_DOWNLOAD_ORIGIN_REFUSED');
    expect(other.requests).toHaveLength(0);
  });

  it.each(['file:///etc/passwd', 'data:text/plain,hello', 'javascript:alert(1)', 'ftp://127.0.0.1/x'])(
    'refuses a %s link',
    async (link) => {
      const error = await failure(client().download(link));
      expect(error.code).toBe('DOCGEN_DOWNLOAD_ORIGIN_REFUSED');
      expect(service.requests).toHaveLength(0);
    },
  );

  it('refuses a protocol-relative redirect to another origin, without following it', async () => {
    service.handle((_req, res) => {
      res.writeHead(302, { location: `//${new URL(other.url).host}/steal` });
      res.end();
    });
    const error = await failure(client().download(`${service.url}/download?token=t`));
    expect(error.code).toBe('DOCGEN_DOWNLOAD_ORIGIN_REFUSED');
    expect(other.requests).toHaveLength(0);
  });

  it('refuses a redirect to a file: URL', async () => {
    service.handle((_req, res) => {
      res.writeHead(301, { location: 'file:///etc/passwd' });
      res.end();
    });
    const error = await failure(client().download(`${service.url}/download?token=t`));
    expect(error.code).toBe('DOCGEN_DOWNLOAD_ORIGIN_REFUSED');
  });

  it('refuses a redirect that puts credentials into an allowed origin', async () => {
    service.handle((_req, res) => {
      res.writeHead(307, { location: `${other.url.replace('http://', 'http://u:p@')}/file` });
      res.end();
    });
    const error = await failure(
      client({ downloadOrigins: [other.url] }).download(`${service.url}/download?token=t`),
    );
    expect(error.code).toBe('DOCGEN_DOWNLOAD_ORIGIN_REFUSED');
    expect(other.requests).toHaveLength(0);
  });

  it('checks every hop: allowed, then allowed, then off the allowed origins is refused', async () => {
    const third = await startFakeService();
    try {
      service.handle((_req, res) => {
        res.writeHead(302, { location: `${other.url}/hop` });
        res.end();
      });
      other.handle((_req, res) => {
        res.writeHead(302, { location: `${third.url}/steal` });
        res.end();
      });
      const error = await failure(
        client({ downloadOrigins: [other.url] }).download(`${service.url}/download?token=t`),
      );
      expect(error.code).toBe('DOCGEN_DOWNLOAD_ORIGIN_REFUSED');
      expect(other.requests).toHaveLength(1);
      expect(third.requests).toHaveLength(0);
    } finally {
      await third.close();
    }
  });

  it('never names the download token in the error', async () => {
    const token = 'tok-5f1d3c0a9b8e7d6c5b4a39281706f5e4';
    service.handle((_req, res) => {
      res.writeHead(302, { location: `${other.url}/x?token=${token}` });
      res.end();
    });
    const error = await failure(client().download(`${service.url}/download?token=${token}`));
    expect(`${error.message} ${JSON.stringify(error)} ${String(error.stack)}`).not.toContain(token);
  });
});

/** A fetch that answers from a script and records the calls: the https service of an AWS deployment. */
function scriptedFetch(answer: (url: string) => Response): {
  fetch: typeof fetch;
  calls: Array<{ url: string; init: RequestInit | undefined }>;
} {
  const calls: Array<{ url: string; init: RequestInit | undefined }> = [];
  const impl = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    calls.push({ url, init });
    return answer(url);
  };
  return { fetch: impl as typeof fetch, calls };
}

const AWS_SERVICE = 'https://docs.example.test';

describe('download links of an https service (as on AWS)', () => {
  const client = (fetchImpl: typeof fetch, downloadOrigins: string[] = []): DocgenClient =>
    new DocgenClient({
      baseUrl: AWS_SERVICE,
      apiKey: staticApiKey(KEY),
      fetch: fetchImpl,
      sleep: noWait,
      downloadOrigins,
    });

  it('follows an https link on the service origin with redirects handled by hand, without the key', async () => {
    const scripted = scriptedFetch(() => new Response('file', { status: 200 }));
    const result = await client(scripted.fetch).download(`${AWS_SERVICE}/download?token=t`);
    result.body.resume();
    expect(scripted.calls).toHaveLength(1);
    expect(scripted.calls[0]?.init?.redirect).toBe('manual');
    expect(JSON.stringify(scripted.calls[0]?.init?.headers ?? {}).toLowerCase()).not.toContain('x-api-key');
  });

  it('refuses a plain-http link to the service host', async () => {
    const scripted = scriptedFetch(() => new Response('file'));
    const error = await failure(client(scripted.fetch).download('http://docs.example.test/download?token=t'));
    expect(error.code).toBe('DOCGEN_DOWNLOAD_ORIGIN_REFUSED');
    expect(scripted.calls).toHaveLength(0);
  });

  it('refuses a plain-http download origin even when it is configured', async () => {
    const scripted = scriptedFetch(() => new Response('file'));
    const error = await failure(
      client(scripted.fetch, ['http://storage.example.test']).download('http://storage.example.test/f?sig=1'),
    );
    expect(error.code).toBe('DOCGEN_DOWNLOAD_ORIGIN_REFUSED');
    expect(scripted.calls).toHaveLength(0);
  });

  it('refuses a redirect that downgrades to http on the same host', async () => {
    const scripted = scriptedFetch(
      () =>
        new Response(null, {
          status: 302,
          headers: { location: 'http://docs.example.test/download?token=t' },
        }),
    );
    const error = await failure(client(scripted.fetch).download(`${AWS_SERVICE}/download?token=t`));
    expect(error.code).toBe('DOCGEN_DOWNLOAD_ORIGIN_REFUSED');
    expect(scripted.calls).toHaveLength(1);
  });

  it('refuses a redirect to the same host on another port', async () => {
    const scripted = scriptedFetch(
      () => new Response(null, { status: 303, headers: { location: 'https://docs.example.test:8443/f' } }),
    );
    const error = await failure(client(scripted.fetch).download(`${AWS_SERVICE}/download?token=t`));
    expect(error.code).toBe('DOCGEN_DOWNLOAD_ORIGIN_REFUSED');
    expect(scripted.calls).toHaveLength(1);
  });

  it('refuses a redirect to an instance-metadata address', async () => {
    const scripted = scriptedFetch(
      () =>
        new Response(null, {
          status: 302,
          headers: { location: 'http://169.254.169.254/latest/meta-data/' },
        }),
    );
    const error = await failure(client(scripted.fetch).download(`${AWS_SERVICE}/download?token=t`));
    expect(error.code).toBe('DOCGEN_DOWNLOAD_ORIGIN_REFUSED');
    expect(scripted.calls.map((c) => new URL(c.url).host)).toEqual(['docs.example.test']);
  });

  it.each(['http://localhost.example.test', 'http://127.0.0.1.example.test'])(
    'treats %s as remote: its http links are refused',
    async (baseUrl) => {
      const scripted = scriptedFetch(() => new Response('file'));
      const remote = new DocgenClient({
        baseUrl,
        apiKey: staticApiKey(KEY),
        fetch: scripted.fetch,
        sleep: noWait,
      });
      const error = await failure(remote.download(`${baseUrl}/download?token=t`));
      expect(error.code).toBe('DOCGEN_DOWNLOAD_ORIGIN_REFUSED');
      expect(scripted.calls).toHaveLength(0);
    },
  );
});

describe('the service client the worker builds', () => {
  it('gives a client that refuses http links when the configured service is https', async () => {
    const config = parseConfig(`service:
  baseUrl: ${AWS_SERVICE}
  apiKeySecret: docrelay/service-api-key
  downloadOrigins: ["https://files.example.test"]
integrations:
  - id: hook
    verify: { scheme: github, secret: docrelay/github }
    documents:
      - name: note
        template: { id: "9003" }
        data: { Title: "title" }
`);
    const { docgen } = buildDocumentService(config, { get: async () => KEY, refresh: () => undefined });
    for (const link of [
      'http://docs.example.test/download?token=t',
      'http://files.example.test/f',
      'https://elsewhere.example.test/f',
    ]) {
      expect((await failure(docgen.download(link))).code).toBe('DOCGEN_DOWNLOAD_ORIGIN_REFUSED');
    }
  });
});
