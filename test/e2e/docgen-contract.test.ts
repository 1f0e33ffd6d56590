/**
 * The client against the service emulator over real HTTP (loopback only): pagination, multi-file rules,
 * retries under injected faults, downloads without the key and only from allowed origins, 413, expired
 * links, and no secret in any error.
 */

import { inspect } from 'node:util';
import { DocgenClient, type DocgenClientOptions, staticApiKey } from '../../functions/docgen/client';
import type { RetryInfo } from '../../functions/docgen/retry';
import { type EmulatorHandle, startEmulator } from '../../local/emulator/server';
import { failure, readAll } from '../helpers/fake-service';

const API_KEY = 'e2e-contract-key-5b7c1d9e';
const EXTRA_TEMPLATES = 450;

let emulator: EmulatorHandle;
let now = Date.parse('2025-01-15T12:00:00Z');
let retries: RetryInfo[];
let slept: number[];

beforeAll(async () => {
  emulator = await startEmulator({
    apiKey: API_KEY,
    port: 0,
    host: '127.0.0.1',
    extraTemplates: EXTRA_TEMPLATES,
    bodyLimitBytes: 16 * 1024,
    clock: () => now,
    seed: 42,
  });
});

afterAll(async () => {
  await emulator.stop();
});

beforeEach(() => {
  retries = [];
  slept = [];
  emulator.setFaults({
    rate429: 0,
    rate5xx: 0,
    retryAfterSeconds: 0,
    downloadFailRate: 0,
    downloadTruncateRate: 0,
    linkTtlMs: 3_600_000,
    failNext: { count: 0, status: 500 },
  });
  emulator.resetStats();
});

function client(overrides: Partial<DocgenClientOptions> = {}): DocgenClient {
  return new DocgenClient({
    baseUrl: emulator.url,
    apiKey: staticApiKey(API_KEY),
    sleep: async (ms) => {
      slept.push(ms);
    },
    onRetry: (info) => retries.push(info),
    ...overrides,
  });
}

const noteData = { Title: 'Contract test', Body: 'Hello from the contract test' };
const releaseData = {
  Release: 'v1.2.3',
  Repository: 'acme/widgets',
  Published: '2025-01-15',
  Channel: 'beta',
};

const requestsTo = (method: string, pathPrefix: string) =>
  emulator.stats().requests.filter((r) => r.method === method && r.path.startsWith(pathPrefix));

describe('workspace and templates', () => {
  it('reads the one workspace of the key', async () => {
    const workspace = await client().getCurrentWorkspace();
    expect(workspace).toEqual(emulator.workspace);
  });

  it('lists every template across pages of 200, each once', async () => {
    const templates = await client().listAllTemplates();
    const ids = templates.map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBeGreaterThan(EXTRA_TEMPLATES + 2);
    expect(ids).toEqual(expect.arrayContaining(['9001', '9002', '9003']));
    expect(ids).not.toContain('9004');
    expect(requestsTo('GET', '/v1.0/templates')).toHaveLength(Math.ceil(ids.length / 200));
  });

  it('reads a template with its properties, and refuses an unknown one with DOCGEN_NOT_FOUND', async () => {
    const pack = await client().getTemplate('9002');
    expect(pack.files.map((f) => [f.id, f.filename])).toEqual([
      ['90021', 'release-notes.docx'],
      ['90022', 'changelog.docx'],
    ]);
    expect(pack.properties?.find((p) => p.name === 'Channel')?.allowedValues).toEqual(['stable', 'beta']);
    expect(await failure(client().getTemplate('9004'))).toMatchObject({
      code: 'DOCGEN_NOT_FOUND',
      attempts: 1,
    });
  });

  it('reports a wrong key as DOCGEN_AUTH without retrying', async () => {
    const error = await failure(client({ apiKey: staticApiKey('not-the-key-000') }).listWorkspaces());
    expect(error).toMatchObject({ code: 'DOCGEN_AUTH', status: 401, retryable: false, attempts: 1 });
  });
});

describe('generate and download', () => {
  it('generates a single-file document and streams it without the API key', async () => {
    const doc = await client().createDocument({ templateId: '9003', data: noteData });
    const [file] = doc.files;
    if (file === undefined) throw new Error('no file');
    const { body, contentLength } = await client().download(file);
    const bytes = await readAll(body);
    expect(bytes.length).toBe(file.size);
    expect(contentLength).toBe(file.size);
    expect(bytes.toString('utf8')).toContain('Hello from the contract test');
    const downloads = emulator.stats().requests.filter((r) => r.path === '/download');
    expect(downloads.length).toBeGreaterThan(0);
    expect(downloads.every((r) => !r.hadApiKey)).toBe(true);
    expect(emulator.stats().downloadHeaders.every((h) => !('x-api-key' in h))).toBe(true);
  });

  it('refuses a multi-file template without a file id before any create request, naming the files', async () => {
    const error = await failure(client().createDocument({ templateId: '9002', data: releaseData }));
    expect(error.code).toBe('DOCGEN_TEMPLATE_FILE_REQUIRED');
    expect(error.message).toContain('90021 (release-notes.docx)');
    expect(error.message).toContain('90022 (changelog.docx)');
    expect(requestsTo('POST', '/v1.0/templates')).toHaveLength(0);
    expect(emulator.stats().documentsCreated).toBe(0);
  });

  it('generates the chosen file of a multi-file template', async () => {
    const doc = await client().createDocument({
      templateId: '9002',
      data: releaseData,
      templateFileId: '90022',
    });
    expect(doc.files[0]?.templateFileReference?.id).toBe('90022');
    expect(emulator.stats().createdDocuments[0]?.templateFileId).toBe('90022');
    const bytes = await readAll((await client().download(doc.files[0] ?? '')).body);
    expect(bytes.subarray(0, 2).toString('latin1')).toBe('PK');
  });

  it('refuses a download link moved to another origin without requesting it', async () => {
    const doc = await client().createDocument({ templateId: '9003', data: noteData });
    const moved = (doc.files[0]?.downloadUrl ?? '').replace('127.0.0.1', 'localhost');
    emulator.resetStats();
    const error = await failure(client().download(moved));
    expect(error).toMatchObject({ code: 'DOCGEN_DOWNLOAD_ORIGIN_REFUSED', retryable: false });
    expect(emulator.stats().requests).toHaveLength(0);
  });

  it('reports an expired link as DOCGEN_LINK_EXPIRED', async () => {
    emulator.setFaults({ linkTtlMs: 1000 });
    const doc = await client().createDocument({ templateId: '9003', data: noteData });
    now += 60_000;
    const error = await failure(client().download(doc.files[0] ?? ''));
    expect(error).toMatchObject({ code: 'DOCGEN_LINK_EXPIRED', status: 404, retryable: false, attempts: 1 });
  });

  it('gives DOCGEN_PAYLOAD_TOO_LARGE with the bytes sent for a body over the limit', async () => {
    const data = { ...noteData, Body: 'x'.repeat(20 * 1024) };
    const error = await failure(client().createDocument({ templateId: '9003', data }));
    const bytes = Buffer.byteLength(JSON.stringify({ data }), 'utf8');
    expect(error).toMatchObject({ code: 'DOCGEN_PAYLOAD_TOO_LARGE', status: 413, attempts: 1 });
    expect(error.message).toContain(`${bytes} bytes`);
  });

  it('exposes contentLength so that a truncated download is detectable', async () => {
    const doc = await client().createDocument({
      templateId: '9002',
      data: releaseData,
      templateFileId: '90021',
    });
    emulator.setFaults({ downloadTruncateRate: 1 });
    const { body, contentLength } = await client().download(doc.files[0] ?? '');
    let received = 0;
    let streamError: unknown;
    try {
      for await (const chunk of body) received += (chunk as Buffer).length;
    } catch (error) {
      streamError = error;
    }
    expect(contentLength).toBe(doc.files[0]?.size);
    expect(received).toBeLessThan(contentLength ?? 0);
    expect(streamError).toMatchObject({ code: 'DOCGEN_DOWNLOAD_CUT' });
  });
});

describe('retries under injected faults', () => {
  it('retries 503 and succeeds on the third request', async () => {
    emulator.setFaults({ failNext: { count: 2, status: 503 } });
    await client().getTemplate('9001');
    expect(retries.map((r) => r.status)).toEqual([503, 503]);
    expect(requestsTo('GET', '/v1.0/templates/9001')).toHaveLength(3);
  });

  it('honours Retry-After on 429', async () => {
    emulator.setFaults({ failNext: { count: 1, status: 429 }, retryAfterSeconds: 2 });
    await client().listWorkspaces();
    expect(retries).toHaveLength(1);
    expect(slept).toHaveLength(1);
    expect(slept[0]).toBeGreaterThanOrEqual(2000);
  });

  it('gives up after maxAttempts with a retryable error and the attempts made', async () => {
    emulator.setFaults({ rate5xx: 1 });
    const error = await failure(client({ retry: { maxAttempts: 3 } }).getTemplate('9001'));
    expect(error).toMatchObject({ code: 'DOCGEN_UNAVAILABLE', retryable: true, attempts: 3 });
    expect(requestsTo('GET', '/v1.0/templates/9001')).toHaveLength(3);
  });

  it('retries a failed download and then streams it', async () => {
    const doc = await client().createDocument({ templateId: '9003', data: noteData });
    emulator.setFaults({ downloadFailRate: 1 });
    const pending = client({ retry: { maxAttempts: 2 } }).download(doc.files[0] ?? '');
    expect(await failure(pending)).toMatchObject({ code: 'DOCGEN_UNAVAILABLE', status: 500, attempts: 2 });
    emulator.setFaults({ downloadFailRate: 0 });
    const bytes = await readAll((await client().download(doc.files[0] ?? '')).body);
    expect(bytes.length).toBe(doc.files[0]?.size);
  });

  it('completes a run of documents under a 30% fault rate', async () => {
    emulator.setFaults({ rate429: 0.15, rate5xx: 0.15 });
    const c = client({ retry: { maxAttempts: 8 } });
    for (let i = 0; i < 10; i++) {
      const doc = await c.createDocument({ templateId: '9003', data: noteData, templateFileId: '90031' });
      expect(doc.files).toHaveLength(1);
    }
    expect(emulator.stats().documentsCreated).toBe(10);
    expect(retries.length).toBeGreaterThan(0);
  });
});

describe('redaction against the emulator', () => {
  it('no error carries the key or a download token', async () => {
    const doc = await client().createDocument({ templateId: '9003', data: noteData });
    const link = doc.files[0]?.downloadUrl ?? '';
    const token = new URL(link).searchParams.get('token') ?? '';
    expect(token.length).toBeGreaterThan(8);
    const errors: unknown[] = [];
    now += 2 * 3_600_000;
    errors.push(await failure(client().download(link)));
    errors.push(await failure(client().download(link.replace('127.0.0.1', 'localhost'))));
    emulator.setFaults({ failNext: { count: 1, status: 400 } });
    errors.push(await failure(client().listWorkspaces()));
    errors.push(await failure(client({ retry: { maxAttempts: 1 } }).getTemplate('nope')));
    for (const error of errors) {
      const text = [inspect(error, { depth: 10, showHidden: true }), JSON.stringify(error)].join('\n');
      expect(text).not.toContain(API_KEY);
      expect(text).not.toContain(token);
    }
  });
});
