/**
 * No error of the client may carry the API key or a download token, even when the service echoes them back
 * in its error bodies: every error kind is provoked and its message, stack, JSON, inspection and causes
 * are searched for both.
 */
import { inspect } from 'node:util';
import { DocgenClient, type DocgenClientOptions, staticApiKey } from '../../../functions/docgen/client';
import { DocgenError } from '../../../functions/docgen/errors';
import {
  type FakeService,
  sendJson,
  startFakeService,
  template,
  templateFile,
} from '../../helpers/fake-service';

const KEY = 'sk_live_SECRETKEY_7f3a9c';
const TOKEN = 'TOKEN_5e1d2b8c9a';

let service: FakeService;
let closedOrigin: string;

beforeAll(async () => {
  const closed = await startFakeService();
  closedOrigin = closed.url;
  await closed.close();
});

beforeEach(async () => {
  service = await startFakeService();
});

afterEach(async () => {
  await service.close();
});

function client(overrides: Partial<DocgenClientOptions> = {}): DocgenClient {
  return new DocgenClient({
    baseUrl: service.url,
    apiKey: staticApiKey(KEY),
    sleep: async () => undefined,
    retry: { maxAttempts: 2 },
    timeoutMs: 100,
    ...overrides,
  });
}

const link = (origin: string): string => `${origin}/files/f1?ver=1&fileId=f1&token=${TOKEN}`;

/**
 * A service that answers every request with `status` and a body quoting what it received: the key header,
 * the URL, and each query value bare (where a download token would be).
 */
const echoing =
  (status: number, headers: Record<string, string> = {}) =>
  (svc: FakeService): void =>
    svc.handle((req, res) => {
      const values = [...new URL(req.url, service.url).searchParams.values()].join(' ');
      const message = `refused key ${String(req.headers['x-api-key'])} for ${service.url}${req.url} (${values})`;
      sendJson(res, status, { message }, headers);
    });

interface Case {
  readonly code: string;
  readonly arrange?: (svc: FakeService) => void;
  readonly act: () => Promise<unknown>;
}

const cases: Case[] = [
  { code: 'DOCGEN_RATE_LIMITED', arrange: echoing(429), act: () => client().getTemplate('1') },
  { code: 'DOCGEN_UNAVAILABLE', arrange: echoing(502), act: () => client().listWorkspaces() },
  { code: 'DOCGEN_AUTH', arrange: echoing(401), act: () => client().getCurrentWorkspace() },
  { code: 'DOCGEN_NOT_FOUND', arrange: echoing(404), act: () => client().getTemplate('1') },
  {
    code: 'DOCGEN_BAD_REQUEST',
    arrange: echoing(422),
    act: () => client().createDocument({ templateId: '1', data: { key: KEY }, template: template('1') }),
  },
  {
    code: 'DOCGEN_PAYLOAD_TOO_LARGE',
    arrange: echoing(413),
    act: () => client().createDocument({ templateId: '1', data: { token: TOKEN }, templateFileId: 'f' }),
  },
  {
    code: 'DOCGEN_TEMPLATE_FILE_REQUIRED',
    act: () =>
      client().createDocument({
        templateId: '1',
        data: { key: KEY },
        template: template('1', [templateFile('a', 'a.docx'), templateFile('b', 'b.docx')]),
      }),
  },
  {
    code: 'DOCGEN_BAD_RESPONSE',
    arrange: (svc) =>
      svc.handle((_req, res) =>
        sendJson(res, 201, { id: KEY, files: [{ id: 'f', '@api.downloadUrl': link('x') }] }),
      ),
    act: () => client().createDocument({ templateId: '1', data: {}, templateFileId: 'f' }),
  },
  {
    code: 'DOCGEN_BAD_RESPONSE',
    arrange: (svc) =>
      svc.handle((_req, res) =>
        sendJson(res, 200, { value: [], '@odata.nextLink': link('http://evil.invalid') }),
      ),
    act: async () => {
      for await (const _ of client().listTemplates()) {
        // drain
      }
    },
  },
  {
    code: 'DOCGEN_TIMEOUT',
    arrange: (svc) => svc.handle(() => undefined),
    act: () => client().getTemplate('1'),
  },
  {
    code: 'DOCGEN_TIMEOUT',
    arrange: (svc) => svc.handle(() => undefined),
    act: () => client().download(link(service.url)),
  },
  {
    code: 'DOCGEN_NETWORK',
    act: () => client({ downloadOrigins: [closedOrigin] }).download(link(closedOrigin)),
  },
  { code: 'DOCGEN_NETWORK', act: () => client({ baseUrl: closedOrigin }).getTemplate('1') },
  { code: 'DOCGEN_DOWNLOAD_ORIGIN_REFUSED', act: () => client().download(link('https://attacker.invalid')) },
  {
    code: 'DOCGEN_DOWNLOAD_ORIGIN_REFUSED',
    arrange: (svc) =>
      svc.handle((_req, res) => {
        res.writeHead(302, { location: link('http://attacker.invalid') });
        res.end();
      }),
    act: () => client().download(link(service.url)),
  },
  { code: 'DOCGEN_LINK_EXPIRED', arrange: echoing(410), act: () => client().download(link(service.url)) },
  { code: 'DOCGEN_BAD_REQUEST', arrange: echoing(400), act: () => client().download(link(service.url)) },
  { code: 'DOCGEN_UNAVAILABLE', arrange: echoing(500), act: () => client().download(link(service.url)) },
  {
    code: 'DOCGEN_ABORTED',
    act: () => client().download(link(service.url), { signal: AbortSignal.abort() }),
  },
];

/** Every text an error exposes: message, stack, JSON, inspection, down its cause chain. */
function exposedText(error: unknown): string {
  const texts: string[] = [inspect(error, { depth: 10, showHidden: true })];
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth++) {
    if (typeof current === 'object') {
      const e = current as { message?: unknown; stack?: unknown; cause?: unknown };
      texts.push(String(e.message), String(e.stack), JSON.stringify(current), String(current));
      current = e.cause;
    } else {
      texts.push(String(current));
      current = undefined;
    }
  }
  return texts.join('\n');
}

describe('errors never carry the API key or a download token', () => {
  it.each(cases.map((c, i) => [`${c.code} #${i}`, c] as const))('%s', async (_name, testCase) => {
    testCase.arrange?.(service);
    let caught: unknown;
    try {
      await testCase.act();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(DocgenError);
    expect((caught as DocgenError).code).toBe(testCase.code);
    const text = exposedText(caught);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(TOKEN);
  });

  it('the leak check itself finds a secret placed in a cause (the test can fail)', () => {
    const leaky = new DocgenError('X', 'ok', false, { cause: new Error(`oops ${TOKEN}`) });
    expect(exposedText(leaky)).toContain(TOKEN);
  });
});
