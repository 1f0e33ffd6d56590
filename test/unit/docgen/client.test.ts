import { DocgenClient, type DocgenClientOptions, staticApiKey } from '../../../functions/docgen/client';
import type { RetryInfo } from '../../../functions/docgen/retry';
import {
  documentBody,
  type FakeService,
  failure,
  sendJson,
  startFakeService,
  template,
  templateFile,
} from '../../helpers/fake-service';

const KEY = 'test-key-0123456789';

let service: FakeService;
let retries: RetryInfo[];
let slept: number[];

beforeEach(async () => {
  service = await startFakeService();
  retries = [];
  slept = [];
});

afterEach(async () => {
  await service.close();
});

function client(overrides: Partial<DocgenClientOptions> = {}): DocgenClient {
  return new DocgenClient({
    baseUrl: service.url,
    apiKey: staticApiKey(KEY),
    sleep: async (ms) => {
      slept.push(ms);
    },
    random: () => 0.5,
    onRetry: (info) => retries.push(info),
    ...overrides,
  });
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe('requests', () => {
  it('sends the API key and Accept on a GET under /v1.0, with or without a trailing slash in baseUrl', async () => {
    service.handle((_req, res) => sendJson(res, 200, { value: [{ id: 'ws-1', displayName: 'Acme' }] }));
    await client().listWorkspaces();
    await client({ baseUrl: `${service.url}/` }).listWorkspaces();
    expect(service.requests.map((r) => r.url)).toEqual(['/v1.0/workspace', '/v1.0/workspace']);
    expect(service.requests[0]?.headers['x-api-key']).toBe(KEY);
    expect(service.requests[0]?.headers.accept).toBe('application/json');
  });

  it('keeps a path prefix of baseUrl and percent-encodes ids', async () => {
    service.handle((_req, res) => sendJson(res, 200, template('a/b c')));
    await client({ baseUrl: `${service.url}/api/` }).getTemplate('a/b c');
    expect(service.requests[0]?.url).toBe('/api/v1.0/templates/a%2Fb%20c');
  });

  it('returns the one workspace of the key', async () => {
    service.handle((_req, res) => sendJson(res, 200, { value: [{ id: 'ws-1', displayName: 'Acme' }] }));
    await expect(client().getCurrentWorkspace()).resolves.toEqual({ id: 'ws-1', displayName: 'Acme' });
  });

  it('refuses a workspace list with no element as a bad response', async () => {
    service.handle((_req, res) => sendJson(res, 200, { value: [] }));
    await expect(client().getCurrentWorkspace()).rejects.toMatchObject({ code: 'DOCGEN_BAD_RESPONSE' });
  });
});

describe('listTemplates', () => {
  it('follows absolute and relative @odata.nextLink across pages, in order', async () => {
    service.handle((req, res) => {
      if (req.url === '/v1.0/templates') {
        sendJson(res, 200, {
          value: [template('3'), template('2')],
          '@odata.nextLink': `${service.url}/v1.0/templates?$skiptoken=p2`,
        });
      } else if (req.url === '/v1.0/templates?$skiptoken=p2') {
        sendJson(res, 200, { value: [template('1')], '@odata.nextLink': '/v1.0/templates?$skiptoken=p3' });
      } else if (req.url === '/v1.0/templates?$skiptoken=p3') {
        sendJson(res, 200, { value: [template('0')] });
      } else {
        sendJson(res, 404, {});
      }
    });
    const ids = (await collect(client().listTemplates())).map((t) => t.id);
    expect(ids).toEqual(['3', '2', '1', '0']);
    expect(service.requests).toHaveLength(3);
    expect(service.requests.every((r) => r.headers['x-api-key'] === KEY)).toBe(true);
  });

  it('stops with a bad-response error when a nextLink repeats a page', async () => {
    service.handle((_req, res) =>
      sendJson(res, 200, {
        value: [template('1')],
        '@odata.nextLink': `${service.url}/v1.0/templates?page=2`,
      }),
    );
    const error = await failure(collect(client().listTemplates()));
    expect(error.code).toBe('DOCGEN_BAD_RESPONSE');
    expect(error.message).toMatch(/loop/);
    expect(service.requests).toHaveLength(2);
  });

  it('never follows a nextLink to another origin (it would carry the key)', async () => {
    service.handle((_req, res) =>
      sendJson(res, 200, { value: [], '@odata.nextLink': 'http://127.0.0.2:1/v1.0/templates?page=2' }),
    );
    const error = await failure(collect(client().listTemplates()));
    expect(error.code).toBe('DOCGEN_BAD_RESPONSE');
    expect(service.requests).toHaveLength(1);
  });

  it('collects all pages with listAllTemplates', async () => {
    let page = 0;
    service.handle((_req, res) => {
      page++;
      const next = page < 5 ? { '@odata.nextLink': `/v1.0/templates?page=${page + 1}` } : {};
      sendJson(res, 200, { value: [template(String(page))], ...next });
    });
    expect((await client().listAllTemplates()).map((t) => t.id)).toEqual(['1', '2', '3', '4', '5']);
  });
});

describe('getTemplate', () => {
  it('passes properties of unknown types and unknown fields through untouched', async () => {
    const body = {
      ...template('9001'),
      properties: [
        { type: 'signature', name: 'Signed by', extra: { nested: [1, 2] } },
        { type: 'boolean', name: 'Paid', defaultValue: 'false' },
      ],
    };
    service.handle((_req, res) => sendJson(res, 200, body));
    const result = await client().getTemplate('9001');
    expect(result.properties).toEqual(body.properties);
    expect(result.files[0]?.usedProperties).toEqual([{ name: 'Customer', required: true }]);
  });

  it('maps 404 to DOCGEN_NOT_FOUND without retrying', async () => {
    service.handle((_req, res) => sendJson(res, 404, { error: { message: 'Template not found' } }));
    const error = await failure(client().getTemplate('nope'));
    expect(error).toMatchObject({ code: 'DOCGEN_NOT_FOUND', status: 404, retryable: false, attempts: 1 });
    expect(error.serviceMessage).toBe('Template not found');
    expect(error.message).toContain('Template not found');
  });

  it('gives a non-retryable DOCGEN_BAD_RESPONSE for a body that is not JSON or not the shape', async () => {
    service.handle((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>proxy</html>');
    });
    expect(await failure(client().getTemplate('1'))).toMatchObject({
      code: 'DOCGEN_BAD_RESPONSE',
      retryable: false,
    });
    service.handle((_req, res) => sendJson(res, 200, { id: '1', files: 'not-an-array' }));
    const error = await failure(client().getTemplate('1'));
    expect(error).toMatchObject({ code: 'DOCGEN_BAD_RESPONSE', attempts: 1 });
    expect(error.message).toMatch(/name|files/);
    expect(service.requests).toHaveLength(2);
  });
});

describe('createDocument', () => {
  const single = template('9001');
  const pack = template('9002', [
    templateFile('f-notes', 'notes.docx'),
    templateFile('f-summary', 'summary.txt'),
  ]);

  it('posts {data} as JSON with the key and charset, accepts 201, and normalises the link', async () => {
    service.handle((_req, res) => sendJson(res, 201, documentBody(`${service.url}/dl?token=t`)));
    const doc = await client().createDocument({
      templateId: '9001',
      data: { Customer: 'ACME' },
      template: single,
    });
    const [post] = service.requests;
    expect(post?.method).toBe('POST');
    expect(post?.url).toBe('/v1.0/templates/9001/documents');
    expect(post?.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(post?.headers['x-api-key']).toBe(KEY);
    expect(JSON.parse(post?.body ?? '')).toEqual({ data: { Customer: 'ACME' } });
    expect(doc.files[0]?.downloadUrl).toBe(`${service.url}/dl?token=t`);
    expect(doc.files[0]).not.toHaveProperty('@api.downloadUrl');
    expect(doc.data).toEqual({ Customer: 'ACME', AutomaticNumber: 7, Description: null });
  });

  it('accepts 200 and the @api.downloadURL spelling', async () => {
    service.handle((_req, res) =>
      sendJson(res, 200, documentBody(`${service.url}/dl?token=u`, '@api.downloadURL')),
    );
    const doc = await client().createDocument({ templateId: '9001', data: {}, template: single });
    expect(doc.files[0]?.downloadUrl).toBe(`${service.url}/dl?token=u`);
  });

  it('reads the template first when neither template nor file id is given, and sends no file id for one file', async () => {
    service.handle((req, res) =>
      req.method === 'GET'
        ? sendJson(res, 200, single)
        : sendJson(res, 201, documentBody(`${service.url}/dl?t=1`)),
    );
    await client().createDocument({ templateId: '9001', data: {} });
    expect(service.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /v1.0/templates/9001',
      'POST /v1.0/templates/9001/documents',
    ]);
  });

  it('refuses a multi-file template without a file id before any create request, naming the files', async () => {
    service.handle((_req, res) => sendJson(res, 200, pack));
    const error = await failure(client().createDocument({ templateId: '9002', data: {} }));
    expect(error.code).toBe('DOCGEN_TEMPLATE_FILE_REQUIRED');
    expect(error.message).toContain('f-notes (notes.docx)');
    expect(error.message).toContain('f-summary (summary.txt)');
    expect(service.requests.filter((r) => r.method === 'POST')).toHaveLength(0);
  });

  it('sends @api.templateFileId when a file is chosen, without reading the template', async () => {
    service.handle((_req, res) => sendJson(res, 201, documentBody(`${service.url}/dl?t=1`)));
    await client().createDocument({ templateId: '9002', data: {}, templateFileId: 'f summary' });
    expect(service.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /v1.0/templates/9002/documents?@api.templateFileId=f%20summary',
    ]);
  });

  it('refuses a file id that the given template does not have', async () => {
    const error = await failure(
      client().createDocument({ templateId: '9002', data: {}, templateFileId: 'other', template: pack }),
    );
    expect(error.code).toBe('DOCGEN_TEMPLATE_FILE_REQUIRED');
    expect(error.message).toContain('f-notes (notes.docx)');
    expect(service.requests).toHaveLength(0);
  });

  it('turns 413 into DOCGEN_PAYLOAD_TOO_LARGE saying the bytes sent, without retrying', async () => {
    service.handle((_req, res) => sendJson(res, 413, { message: 'Request entity too large' }));
    const data = { Customer: 'Zoë'.repeat(1000) };
    const error = await failure(client().createDocument({ templateId: '9001', data, template: single }));
    const bytes = Buffer.byteLength(JSON.stringify({ data }), 'utf8');
    expect(error).toMatchObject({
      code: 'DOCGEN_PAYLOAD_TOO_LARGE',
      status: 413,
      retryable: false,
      bodyBytes: bytes,
    });
    expect(error.message).toContain(`${bytes} bytes`);
    expect(service.requests).toHaveLength(1);
  });

  it('gives DOCGEN_BAD_RESPONSE when a generated file has no download link', async () => {
    const body = documentBody('x');
    const files = body.files as Array<Record<string, unknown>>;
    delete files[0]?.['@api.downloadUrl'];
    service.handle((_req, res) => sendJson(res, 201, body));
    const error = await failure(client().createDocument({ templateId: '9001', data: {}, template: single }));
    expect(error).toMatchObject({ code: 'DOCGEN_BAD_RESPONSE', retryable: false });
    expect(error.message).toContain('downloadUrl');
  });
});

describe('retries', () => {
  it('retries 429 honouring Retry-After, then succeeds', async () => {
    let n = 0;
    service.handle((_req, res) => {
      n++;
      if (n <= 2) sendJson(res, 429, { message: 'Too many requests' }, { 'retry-after': '2' });
      else sendJson(res, 200, template('1'));
    });
    await client().getTemplate('1');
    expect(service.requests).toHaveLength(3);
    expect(retries.map((r) => [r.attempt, r.status, r.code])).toEqual([
      [1, 429, 'DOCGEN_RATE_LIMITED'],
      [2, 429, 'DOCGEN_RATE_LIMITED'],
    ]);
    expect(slept).toEqual([2000, 2000]);
  });

  it('gives up after maxAttempts on 5xx with a retryable DOCGEN_UNAVAILABLE', async () => {
    service.handle((_req, res) => sendJson(res, 503, { title: 'Service Unavailable' }));
    const error = await failure(client({ retry: { maxAttempts: 3 } }).getTemplate('1'));
    expect(error).toMatchObject({ code: 'DOCGEN_UNAVAILABLE', status: 503, retryable: true, attempts: 3 });
    expect(error.serviceMessage).toBe('Service Unavailable');
    expect(service.requests).toHaveLength(3);
  });

  it("cuts a call's retries to its own retry budget when that is shorter (a retried job's calls)", async () => {
    service.handle((_req, res) => sendJson(res, 503, {}));
    let now = 0;
    const budgeted = client({
      now: () => now,
      sleep: async (ms) => {
        slept.push(ms);
        now += ms;
      },
      retry: { maxAttempts: 10, baseDelayMs: 1_000 },
      random: () => 1,
    });
    const error = await failure(
      budgeted.createDocument({ templateId: '1', templateFileId: 'f', data: {}, retryBudgetMs: 2_500 }),
    );
    expect(error).toMatchObject({ code: 'DOCGEN_UNAVAILABLE', attempts: 3 });
    expect(slept).toEqual([1_000, 1_500]);
    await failure(budgeted.download(`${service.url}/file?token=t`, { retryBudgetMs: 0 }));
    expect(service.requests).toHaveLength(4);
  });

  it('uses full-jitter exponential backoff between attempts', async () => {
    service.handle((_req, res) => sendJson(res, 500, {}));
    await failure(
      client({ retry: { maxAttempts: 4, baseDelayMs: 100 }, random: () => 0.5 }).getTemplate('1'),
    );
    expect(slept).toEqual([50, 100, 200]);
  });

  it('never retries other 4xx', async () => {
    service.handle((_req, res) => sendJson(res, 400, { message: 'data must be an object' }));
    const error = await failure(
      client().createDocument({ templateId: '9001', data: {}, template: template('9001') }),
    );
    expect(error).toMatchObject({ code: 'DOCGEN_BAD_REQUEST', status: 400, retryable: false, attempts: 1 });
    expect(service.requests).toHaveLength(1);
  });

  it('retries a request that times out, then reports DOCGEN_TIMEOUT', async () => {
    service.handle(() => {
      // Never answers.
    });
    const error = await failure(client({ timeoutMs: 200, retry: { maxAttempts: 2 } }).getTemplate('1'));
    expect(error).toMatchObject({ code: 'DOCGEN_TIMEOUT', retryable: true, attempts: 2 });
    expect(service.requests).toHaveLength(2);
  });

  it('retries a refused connection, then reports DOCGEN_NETWORK', async () => {
    const closedUrl = service.url;
    await service.close();
    const error = await failure(client({ baseUrl: closedUrl, retry: { maxAttempts: 2 } }).getTemplate('1'));
    expect(error).toMatchObject({ code: 'DOCGEN_NETWORK', retryable: true, attempts: 2 });
    expect(error.message).toContain('ECONNREFUSED');
    service = await startFakeService();
  });

  it('does not follow an API redirect (it would carry the key elsewhere)', async () => {
    service.handle((_req, res) => {
      res.writeHead(302, { location: 'http://127.0.0.2:9/steal' });
      res.end();
    });
    const error = await failure(client().getTemplate('1'));
    expect(error).toMatchObject({ code: 'DOCGEN_BAD_RESPONSE', status: 302 });
    expect(service.requests).toHaveLength(1);
  });
});

describe('API key rotation', () => {
  it('re-reads the key once after a 401 and retries with the new one', async () => {
    let current = 'old-key-000000';
    let refreshes = 0;
    const apiKey = {
      get: async () => current,
      refresh: async () => {
        refreshes++;
        current = 'new-key-111111';
        return current;
      },
    };
    service.handle((req, res) =>
      req.headers['x-api-key'] === 'new-key-111111'
        ? sendJson(res, 200, template('1'))
        : sendJson(res, 401, {}),
    );
    await client({ apiKey }).getTemplate('1');
    expect(refreshes).toBe(1);
    expect(service.requests.map((r) => r.headers['x-api-key'])).toEqual(['old-key-000000', 'new-key-111111']);
  });

  it('reports a non-retryable DOCGEN_AUTH when the refreshed key is refused too', async () => {
    let refreshes = 0;
    const apiKey = {
      get: async () => 'some-key-000000',
      refresh: () => {
        refreshes++;
      },
    };
    service.handle((_req, res) => sendJson(res, 403, { message: 'Forbidden' }));
    const error = await failure(client({ apiKey }).getTemplate('1'));
    expect(error).toMatchObject({ code: 'DOCGEN_AUTH', status: 403, retryable: false, attempts: 2 });
    expect(refreshes).toBe(1);
    expect(service.requests).toHaveLength(2);
  });
});

describe('service messages', () => {
  it.each([
    [{ message: 'plain' }, 'plain'],
    [{ error: { message: 'nested' } }, 'nested'],
    [{ title: 'Bad Request', status: 400 }, 'Bad Request'],
    [{ detail: 'a detail' }, 'a detail'],
  ])('reads the message of %j', async (body, expected) => {
    service.handle((_req, res) => sendJson(res, 400, body));
    expect((await failure(client().getTemplate('1'))).serviceMessage).toBe(expected);
  });

  it('falls back to the text, collapsed and truncated to 300 characters', async () => {
    service.handle((_req, res) => {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end(`Bad\n\nthing ${'x'.repeat(1000)}`);
    });
    const message = (await failure(client().getTemplate('1'))).serviceMessage ?? '';
    expect(message.startsWith('Bad thing x')).toBe(true);
    expect(message.length).toBeLessThanOrEqual(300);
  });
});
