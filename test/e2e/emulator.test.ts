/**
 * The Document Generation Service emulator over real HTTP on 127.0.0.1 (random ports): every operation and
 * rule of the interface page, the admin API, faults, outages, downloads and the `docrelay emulator` command.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import mammoth from 'mammoth';
import { runEmulator } from '../../bin/commands/emulator';
import { main } from '../../bin/docrelay';
import type { FaultSettings } from '../../local/emulator/faults';
import { type EmulatorHandle, type EmulatorOptions, startEmulator } from '../../local/emulator/server';
import { waitUntil } from './helpers/wait';

jest.setTimeout(30_000);

const apiKey = 'test-key-0123456789';

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

interface DocumentBody {
  id: string;
  name: string;
  data: Record<string, unknown>;
  templateReference: { id: string; name: string };
  files: Array<{
    id: string;
    mimeType: string;
    filename: string;
    size: number;
    templateFileReference: { id: string; name: string; templateId: string };
    isTemporary: boolean;
    '@api.downloadUrl': string;
  }>;
}

interface ErrorBody {
  error: { code: string; message: string };
}

const running: EmulatorHandle[] = [];

async function emulator(options: Partial<EmulatorOptions> = {}): Promise<EmulatorHandle> {
  const handle = await startEmulator({ apiKey, seed: 1, ...options });
  running.push(handle);
  return handle;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((handle) => handle.stop()));
});

async function call(
  em: EmulatorHandle,
  method: string,
  path: string,
  options: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  const key = options.key === undefined ? em.apiKey : options.key;
  if (key !== null) headers['x-api-key'] = key;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json; charset=utf-8';
  }
  const res = await fetch(`${em.url}${path}`, { method, headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) };
}

const invoiceData = {
  'Customer Name': 'Ada Lovelace & Co',
  'Invoice Number': 'INV-0042',
  Amount: 1250.5,
  Paid: true,
};

async function createInvoice(
  em: EmulatorHandle,
  data: Record<string, unknown> = invoiceData,
): Promise<DocumentBody> {
  const answer = await call(em, 'POST', '/v1.0/templates/9001/documents', { body: { data } });
  expect(answer.status).toBe(201);
  return answer.body as DocumentBody;
}

const downloadLink = (doc: DocumentBody): string => {
  const link = doc.files[0]?.['@api.downloadUrl'];
  if (link === undefined) throw new Error('no file in the document');
  return link;
};

describe('authentication', () => {
  // Objects rather than tuples: Jest would take a missing third tuple element for a `done` callback.
  const operations: Array<{ method: string; path: string; body?: unknown }> = [
    { method: 'GET', path: '/v1.0/workspace' },
    { method: 'GET', path: '/v1.0/workspace/00000000-0000-4000-8000-000000000000' },
    { method: 'GET', path: '/v1.0/templates' },
    { method: 'GET', path: '/v1.0/templates/9001' },
    { method: 'POST', path: '/v1.0/templates/9001/documents', body: { data: invoiceData } },
    { method: 'GET', path: '/_emulator/faults' },
    { method: 'PUT', path: '/_emulator/faults', body: { rate429: 1 } },
    { method: 'GET', path: '/_emulator/stats' },
    { method: 'POST', path: '/_emulator/reset-stats' },
    { method: 'POST', path: '/_emulator/pause' },
    { method: 'POST', path: '/_emulator/resume' },
  ];

  it.each(operations)(
    '$method $path answers 401 without a key and with a wrong one',
    async ({ method, path, body }) => {
      const em = await emulator();
      for (const key of [null, 'wrong-key']) {
        const answer = await call(em, method, path, { key, body });
        expect(answer.status).toBe(401);
        expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
        expect((answer.body as ErrorBody).error.code).toBe('Unauthorized');
      }
      // A rejected admin call changed nothing.
      expect(em.faults().rate429).toBe(0);
      expect((await call(em, 'GET', '/v1.0/workspace')).status).toBe(200);
    },
  );

  it('records whether each request carried a key', async () => {
    const em = await emulator();
    await call(em, 'GET', '/v1.0/templates', { key: null });
    await call(em, 'GET', '/v1.0/templates', { key: 'wrong' });
    await call(em, 'GET', '/v1.0/templates');
    expect(em.stats().requests.map((r) => [r.status, r.hadApiKey])).toEqual([
      [401, false],
      [401, true],
      [200, true],
    ]);
  });
});

describe('workspace', () => {
  it('lists exactly the one workspace of the key and reads it by id', async () => {
    const em = await emulator();
    const list = await call(em, 'GET', '/v1.0/workspace');
    expect(list.status).toBe(200);
    const { value } = list.body as { value: Array<{ id: string; displayName: string }> };
    expect(value).toHaveLength(1);
    expect(value[0]?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const one = await call(em, 'GET', `/v1.0/workspace/${value[0]?.id}`);
    expect(one).toMatchObject({ status: 200, body: value[0] });
  });

  it('answers 404 for another workspace id', async () => {
    const em = await emulator();
    const answer = await call(em, 'GET', '/v1.0/workspace/00000000-0000-4000-8000-000000000000');
    expect(answer.status).toBe(404);
    expect((answer.body as ErrorBody).error.code).toBe('NotFound');
  });
});

describe('template list', () => {
  it('pages 453 active templates as 200, 200 and 53, newest first, with a nextLink only when more remain', async () => {
    const em = await emulator({ extraTemplates: 450 });
    const ids: string[] = [];
    const created: string[] = [];
    const pageSizes: number[] = [];
    let next: string | undefined = `${em.url}/v1.0/templates`;
    while (next !== undefined) {
      expect(next.startsWith(`${em.url}/v1.0/templates`)).toBe(true);
      const res: Response = await fetch(next, { headers: { 'x-api-key': apiKey } });
      expect(res.status).toBe(200);
      const page = (await res.json()) as {
        value: Array<Record<string, unknown>>;
        '@odata.nextLink'?: string;
      };
      pageSizes.push(page.value.length);
      for (const item of page.value) {
        expect(Object.keys(item).sort()).toEqual(['createdDateTime', 'files', 'id', 'name']);
        ids.push(String(item['id']));
        created.push(String(item['createdDateTime']));
      }
      next = page['@odata.nextLink'];
    }
    expect(pageSizes).toEqual([200, 200, 54]);
    expect(new Set(ids).size).toBe(454);
    expect(ids.slice(0, 3)).toEqual(['9002', '9001', '9003']);
    expect(ids).not.toContain('9004');
    const times = created.map((t) => Date.parse(t));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('has no nextLink when everything fits one page', async () => {
    const em = await emulator();
    const answer = await call(em, 'GET', '/v1.0/templates');
    expect(answer.body).not.toHaveProperty(['@odata.nextLink']);
    expect((answer.body as { value: Array<{ id: string }> }).value.map((t) => t.id)).toEqual([
      '9002',
      '9001',
      '9003',
      '9005',
    ]);
  });

  it('honours a smaller page size and rejects a forged skip token', async () => {
    const em = await emulator({ pageSize: 2 });
    const first = await call(em, 'GET', '/v1.0/templates');
    const link = (first.body as { '@odata.nextLink': string })['@odata.nextLink'];
    expect(new URL(link).searchParams.get('$skiptoken')).toBeTruthy();
    const second = await call(em, 'GET', link.slice(em.url.length));
    expect((second.body as { value: Array<{ id: string }> }).value.map((t) => t.id)).toEqual([
      '9003',
      '9005',
    ]);
    expect((await call(em, 'GET', '/v1.0/templates?$skiptoken=forged')).status).toBe(400);
  });
});

describe('single template', () => {
  it('returns properties and usedProperties derived from the tags of each file', async () => {
    const em = await emulator();
    const answer = await call(em, 'GET', '/v1.0/templates/9002');
    expect(answer.status).toBe(200);
    const template = answer.body as {
      properties: Array<{ name: string; type: string; allowedValues?: string[]; defaultValue?: string }>;
      files: Array<{
        id: string;
        filename: string;
        usedProperties: Array<{ name: string; required: boolean }>;
      }>;
    };
    expect(template.properties.map((p) => p.name)).toEqual([
      'Release',
      'Repository',
      'Published',
      'Author',
      'Channel',
    ]);
    expect(template.properties.find((p) => p.name === 'Channel')).toMatchObject({
      type: 'select',
      allowedValues: ['stable', 'beta'],
      defaultValue: 'stable',
    });
    expect(template.files.map((f) => [f.id, f.filename])).toEqual([
      ['90021', 'release-notes.docx'],
      ['90022', 'changelog.docx'],
    ]);
    expect(template.files[1]?.usedProperties).toEqual([
      { name: 'Repository', required: true },
      { name: 'Release', required: true },
      { name: 'Channel', required: false },
      { name: 'Published', required: false },
    ]);
  });

  it.each(['12345', '9004'])('answers 404 for unknown or inactive template %s', async (id) => {
    const em = await emulator();
    const answer = await call(em, 'GET', `/v1.0/templates/${id}`);
    expect(answer.status).toBe(404);
    expect((answer.body as ErrorBody).error.message).toContain(id);
  });
});

describe('create document', () => {
  it('answers 201 with the client values, the system entries and a download link per file', async () => {
    const em = await emulator();
    const doc = await createInvoice(em);
    expect(doc.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(doc.templateReference).toEqual({ id: '9001', name: 'Invoice' });
    expect(doc.data).toMatchObject({
      ...invoiceData,
      AutomaticNumber: 1,
      Title: 'Invoice 1',
      Template: '9001',
      Organization: em.workspace.displayName,
      Description: null,
      Keywords: null,
      Subject: null,
    });
    expect(doc.data['CreatedOn']).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(doc.data['DocumentDate']).toMatch(/Z$/);
    const [file] = doc.files;
    expect(file).toMatchObject({
      mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      filename: 'invoice-1.docx',
      templateFileReference: { id: '90011', name: 'invoice.docx', templateId: '9001' },
      isTemporary: true,
    });
    const link = new URL(downloadLink(doc));
    expect(link.origin).toBe(em.url);
    expect(link.pathname).toBe('/download');
    expect(link.searchParams.get('version')).toBe('1.0');
    expect(link.searchParams.get('fileId')).toBe(file?.id);
    expect(link.searchParams.get('token')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('counts AutomaticNumber up across documents of the workspace', async () => {
    const em = await emulator();
    const numbers: unknown[] = [];
    for (let i = 0; i < 3; i += 1) numbers.push((await createInvoice(em)).data['AutomaticNumber']);
    expect(numbers).toEqual([1, 2, 3]);
    expect(em.stats().documentsCreated).toBe(3);
  });

  it('serves the generated .docx without a key, with the values merged', async () => {
    const em = await emulator();
    const doc = await createInvoice(em, { ...invoiceData, 'Due Date': '2024-07-31', Currency: 'GBP' });
    const res = await fetch(downloadLink(doc));
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(res.headers.get('content-type')).toBe(doc.files[0]?.mimeType);
    expect(Number(res.headers.get('content-length'))).toBe(bytes.length);
    expect(bytes.length).toBe(doc.files[0]?.size);
    const { value } = await mammoth.extractRawText({ buffer: bytes });
    expect(value).toContain('Invoice INV-0042');
    expect(value).toContain('Billed to: Ada Lovelace & Co');
    expect(value).toContain('Amount due: 1250.5 GBP');
    expect(value).toContain('Due date: 2024-07-31');
    const stats = em.stats();
    expect(stats.downloads).toBe(1);
    expect(stats.downloadHeaders[0]).not.toHaveProperty('x-api-key');
    expect(stats.createdDocuments[0]?.files[0]).toEqual({
      fileId: doc.files[0]?.id,
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
  });

  it('records an API key sent to a download link, redacted', async () => {
    const em = await emulator();
    const doc = await createInvoice(em);
    await (await fetch(downloadLink(doc), { headers: { 'x-api-key': apiKey } })).arrayBuffer();
    expect(em.stats().downloadHeaders[0]?.['x-api-key']).toBe('<redacted>');
  });

  it('applies a select default and renders a text/plain template', async () => {
    const em = await emulator();
    const answer = await call(em, 'POST', '/v1.0/templates/9003/documents', {
      body: { data: { Title: 'Shopping', Body: 'Milk, eggs' } },
    });
    expect(answer.status).toBe(201);
    const doc = answer.body as DocumentBody;
    expect(doc.data['Title']).toBe('Shopping');
    expect(doc.files[0]).toMatchObject({ mimeType: 'text/plain', filename: 'note-1.txt' });
    const res = await fetch(downloadLink(doc));
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await res.text()).toBe('Shopping\n\nMilk, eggs\n');
  });

  it('requires @api.templateFileId for a multi-file template, naming the files', async () => {
    const em = await emulator();
    const data = { Release: 'v2.1.0', Repository: 'acme/widgets', Published: '2024-05-01', Channel: 'beta' };
    const without = await call(em, 'POST', '/v1.0/templates/9002/documents', { body: { data } });
    expect(without.status).toBe(400);
    expect((without.body as ErrorBody).error.message).toMatch(/@api\.templateFileId.*90021.*90022/);

    const unknown = await call(em, 'POST', '/v1.0/templates/9002/documents?@api.templateFileId=99999', {
      body: { data },
    });
    expect(unknown.status).toBe(400);

    const answer = await call(em, 'POST', '/v1.0/templates/9002/documents?%40api.templateFileId=90022', {
      body: { data },
    });
    expect(answer.status).toBe(201);
    const doc = answer.body as DocumentBody;
    expect(doc.files).toHaveLength(1);
    expect(doc.files[0]?.templateFileReference).toEqual({
      id: '90022',
      name: 'changelog.docx',
      templateId: '9002',
    });
    const bytes = Buffer.from(await (await fetch(downloadLink(doc))).arrayBuffer());
    const { value } = await mammoth.extractRawText({ buffer: bytes });
    expect(value).toContain('Changelog of acme/widgets');
    expect(value).toContain('Version v2.1.0 (beta)');
  });

  it('answers 413 "Request entity too large" for a body over the limit', async () => {
    const em = await emulator({ bodyLimitBytes: 1024 });
    const answer = await call(em, 'POST', '/v1.0/templates/9001/documents', {
      body: { data: { ...invoiceData, Notes: 'x'.repeat(2048) } },
    });
    expect(answer.status).toBe(413);
    expect((answer.body as ErrorBody).error.message).toBe('Request entity too large');
  });

  it('answers 413 for a chunked body that grows past the limit', async () => {
    const em = await emulator({ bodyLimitBytes: 1024 });
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${em.url}/v1.0/templates/9001/documents`,
        { method: 'POST', headers: { 'x-api-key': apiKey, 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 8; i += 1) req.write('x'.repeat(512));
      req.end();
    });
    expect(status).toBe(413);
  });

  it('answers 415 when the body is not declared as JSON', async () => {
    const em = await emulator();
    const answer = await call(em, 'POST', '/v1.0/templates/9001/documents', {
      body: JSON.stringify({ data: invoiceData }),
      headers: { 'content-type': 'text/plain' },
    });
    expect(answer.status).toBe(415);
  });

  it.each([
    ['not JSON', '{"data":', /not valid JSON/],
    ['data missing', { nope: 1 }, /"data" is required/],
    ['data an array', { data: [1] }, /"data" is required/],
    ['a select value not allowed', { data: { ...invoiceData, Currency: 'CHF' } }, /"Currency"/],
    ['a required value missing', { data: { 'Customer Name': 'x' } }, /"Invoice Number"/],
  ])('answers 400 for %s', async (_case, body, message) => {
    const em = await emulator();
    const answer = await call(em, 'POST', '/v1.0/templates/9001/documents', { body });
    expect(answer.status).toBe(400);
    expect((answer.body as ErrorBody).error).toMatchObject({
      code: 'BadRequest',
      message: expect.stringMatching(message),
    });
    expect(em.stats().documentsCreated).toBe(0);
  });

  it('answers 404 for an unknown template and 405 for a wrong method', async () => {
    const em = await emulator();
    expect((await call(em, 'POST', '/v1.0/templates/777/documents', { body: { data: {} } })).status).toBe(
      404,
    );
    expect((await call(em, 'GET', '/v1.0/templates/9001/documents')).status).toBe(405);
  });
});

describe('download links', () => {
  it('answer 404 once expired, and the file is gone', async () => {
    let now = Date.parse('2024-01-01T00:00:00Z');
    const em = await emulator({ clock: () => now, linkTtlMs: 60_000 });
    const doc = await createInvoice(em);
    expect(doc.data['CreatedOn']).toBe('2024-01-01T00:00:00.000Z');
    now += 59_999;
    expect((await fetch(downloadLink(doc))).status).toBe(200);
    now += 1;
    const expired = await fetch(downloadLink(doc));
    expect(expired.status).toBe(404);
    expect(((await expired.json()) as ErrorBody).error.code).toBe('NotFound');
    expect(em.storage().files).toBe(0);
  });

  it('take their lifetime from faults.linkTtlMs when it is set', async () => {
    let now = 1_000_000;
    const em = await emulator({ clock: () => now });
    em.setFaults({ linkTtlMs: 10 });
    const doc = await createInvoice(em);
    now += 10;
    expect((await fetch(downloadLink(doc))).status).toBe(404);
  });

  it('answer 404 for a wrong token or unknown file', async () => {
    const em = await emulator();
    const link = new URL(downloadLink(await createInvoice(em)));
    link.searchParams.set('token', 'f'.repeat(64));
    expect((await fetch(link)).status).toBe(404);
    expect((await fetch(`${em.url}/download?version=1.0&fileId=nope&token=x`)).status).toBe(404);
  });
});

describe('faults', () => {
  it('rate429 answers 429 with Retry-After', async () => {
    const em = await emulator({ faults: { rate429: 1, retryAfterSeconds: 7 } });
    const answer = await call(em, 'GET', '/v1.0/templates');
    expect(answer.status).toBe(429);
    expect(answer.headers.get('retry-after')).toBe('7');
    expect(em.stats().requests[0]).toMatchObject({ status: 429, fault: 'rate429' });
  });

  it('rate5xx answers a server error', async () => {
    const em = await emulator({ faults: { rate5xx: 1 } });
    const statuses = new Set<number>();
    for (let i = 0; i < 8; i += 1) statuses.add((await call(em, 'GET', '/v1.0/workspace')).status);
    for (const status of statuses) expect([500, 502, 503, 504]).toContain(status);
  });

  it('checks the key before injecting faults', async () => {
    const em = await emulator({ faults: { rate429: 1, failNext: { count: 1, status: 500 } } });
    expect((await call(em, 'GET', '/v1.0/workspace', { key: null })).status).toBe(401);
    expect(em.faults().failNext).toEqual({ count: 1, status: 500 });
  });

  it('rolls the same faults for the same seed', async () => {
    const sequence = async (seed: number): Promise<number[]> => {
      const em = await emulator({ seed, faults: { rate429: 0.5 } });
      const statuses: number[] = [];
      for (let i = 0; i < 12; i += 1) statuses.push((await call(em, 'GET', '/v1.0/workspace')).status);
      return statuses;
    };
    const first = await sequence(123);
    expect(await sequence(123)).toEqual(first);
    expect(first).toContain(429);
    expect(first).toContain(200);
  });

  it('latency shows in the stats of every API call, generation latency on create only', async () => {
    const em = await emulator({ faults: { latencyMs: 20, generationLatencyMs: 30 } });
    await call(em, 'GET', '/v1.0/workspace');
    await createInvoice(em);
    expect(em.stats().requests.map((r) => [r.path, r.delayMs])).toEqual([
      ['/v1.0/workspace', 20],
      ['/v1.0/templates/9001/documents', 50],
    ]);
  });

  it('failNext fails exactly the next N API requests', async () => {
    const em = await emulator({ faults: { retryAfterSeconds: 2 } });
    em.setFaults({ failNext: { count: 2, status: 503 } });
    const first = await call(em, 'GET', '/v1.0/templates');
    expect(first.status).toBe(503);
    expect(first.headers.get('retry-after')).toBe('2');
    expect((await call(em, 'GET', '/v1.0/templates')).status).toBe(503);
    expect((await call(em, 'GET', '/v1.0/templates')).status).toBe(200);
    expect(em.faults().failNext).toBeUndefined();
  });

  it('downloadFailRate answers 500 to a download', async () => {
    const em = await emulator();
    const doc = await createInvoice(em);
    em.setFaults({ downloadFailRate: 1 });
    expect((await fetch(downloadLink(doc))).status).toBe(500);
    em.setFaults({ downloadFailRate: 0 });
    expect((await fetch(downloadLink(doc))).status).toBe(200);
  });

  it('downloadTruncateRate sends the full Content-Length, then part of the body, then drops the connection', async () => {
    const em = await emulator();
    const doc = await createInvoice(em);
    em.setFaults({ downloadTruncateRate: 1 });
    const res = await fetch(downloadLink(doc));
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('content-length'))).toBe(doc.files[0]?.size);
    await expect(res.arrayBuffer()).rejects.toThrow();
    expect(em.stats().requests.at(-1)).toMatchObject({
      path: '/download',
      status: 200,
      fault: 'downloadTruncate',
    });
  });
});

describe('outage', () => {
  it('pause answers 503 with Retry-After to API and downloads until resume', async () => {
    const em = await emulator({ faults: { retryAfterSeconds: 3 } });
    const doc = await createInvoice(em);
    em.pause();
    const paused = await call(em, 'GET', '/v1.0/templates');
    expect(paused.status).toBe(503);
    expect(paused.headers.get('retry-after')).toBe('3');
    expect((await fetch(downloadLink(doc))).status).toBe(503);
    em.resume();
    expect((await call(em, 'GET', '/v1.0/templates')).status).toBe(200);
  });
});

describe('admin API over HTTP', () => {
  it('reads and merges faults, rejecting invalid ones', async () => {
    const em = await emulator();
    const put = await call(em, 'PUT', '/_emulator/faults', {
      body: { rate429: 0.25, failNext: { count: 1, status: 502 } },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      rate429: 0.25,
      linkTtlMs: 3_600_000,
      failNext: { count: 1, status: 502 },
    });
    expect((await call(em, 'GET', '/_emulator/faults')).body).toEqual(put.body);
    expect(em.faults()).toEqual(put.body as FaultSettings);
    const bad = await call(em, 'PUT', '/_emulator/faults', { body: { rate429: 2 } });
    expect(bad.status).toBe(400);
    expect(em.faults().rate429).toBe(0.25);
  });

  it('serves and resets stats, without recording admin calls', async () => {
    const em = await emulator();
    await createInvoice(em);
    const stats = await call(em, 'GET', '/_emulator/stats');
    expect(stats.body).toMatchObject({
      documentsCreated: 1,
      requests: [{ path: '/v1.0/templates/9001/documents' }],
    });
    expect((await call(em, 'POST', '/_emulator/reset-stats')).status).toBe(200);
    expect(em.stats()).toEqual({
      requests: [],
      documentsCreated: 0,
      downloads: 0,
      downloadHeaders: [],
      createdDocuments: [],
      generationsInFlight: 0,
      maxGenerationsInFlight: 0,
    });
    // The workspace counter survives a stats reset.
    expect((await createInvoice(em)).data['AutomaticNumber']).toBe(2);
  });

  it('pauses and resumes', async () => {
    const em = await emulator();
    expect((await call(em, 'POST', '/_emulator/pause')).body).toEqual({ paused: true });
    expect((await call(em, 'GET', '/v1.0/workspace')).status).toBe(503);
    expect((await call(em, 'POST', '/_emulator/resume')).body).toEqual({ paused: false });
    expect((await call(em, 'GET', '/v1.0/workspace')).status).toBe(200);
  });

  it('answers 404 for an unknown admin route', async () => {
    const em = await emulator();
    expect((await call(em, 'GET', '/_emulator/nothing')).status).toBe(404);
  });
});

describe('large synthetic files', () => {
  it('stream with the sha256 and size recorded at creation, without holding the file in memory', async () => {
    const size = 48 * 1024 * 1024 + 7;
    const em = await emulator({ syntheticFileBytes: size });
    const answer = await call(em, 'POST', '/v1.0/templates/9099/documents', {
      body: { data: { Title: 'Big' } },
    });
    expect(answer.status).toBe(201);
    const doc = answer.body as DocumentBody;
    expect(doc.files[0]?.size).toBe(size);
    expect(em.storage().bytesHeld).toBeLessThan(1024);

    const res = await fetch(downloadLink(doc));
    expect(Number(res.headers.get('content-length'))).toBe(size);
    const hash = createHash('sha256');
    let received = 0;
    const reader = res.body?.getReader();
    if (reader === undefined) throw new Error('no body');
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      hash.update(chunk.value);
      received += chunk.value.length;
    }
    expect(received).toBe(size);
    expect(em.stats().createdDocuments[0]?.files[0]).toEqual({
      fileId: doc.files[0]?.id,
      size,
      sha256: hash.digest('hex'),
    });
  });
});

describe('docrelay emulator command', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'docrelay-emulator-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const collector = (): { stream: Writable; text: () => string } => {
    let text = '';
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        text += chunk.toString();
        callback();
      },
    });
    return { stream, text: () => text };
  };

  it('creates the key secret, writes the endpoint, never prints the key, and stops on abort', async () => {
    const stdout = collector();
    const controller = new AbortController();
    const env = { DOCRELAY_DATA_DIR: join(dir, 'data') };
    const done = runEmulator(
      { stdout: stdout.stream, stderr: collector().stream, env, cwd: dir },
      { port: 0, host: '127.0.0.1' },
      controller.signal,
    );
    let exitedEarly: unknown;
    done.then(
      (code) => {
        exitedEarly = `exited with ${code}`;
      },
      (error: unknown) => {
        exitedEarly = error;
      },
    );
    await waitUntil(
      'the emulator to print its ready line',
      async () => {
        if (exitedEarly !== undefined) throw new Error(`the emulator stopped: ${String(exitedEarly)}`);
        return stdout.text().includes('ready') ? true : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 20, describe: () => stdout.text() },
    );
    const endpoints = JSON.parse(await readFile(join(dir, 'data', 'endpoints.json'), 'utf8')) as {
      emulator: { baseUrl: string };
    };
    const secrets = JSON.parse(await readFile(join(dir, 'data', 'secrets.json'), 'utf8')) as Record<
      string,
      string
    >;
    const key = secrets['docrelay/service-api-key'];
    expect(key).toBeTruthy();
    expect(stdout.text()).toContain(`ready at ${endpoints.emulator.baseUrl}`);
    expect(stdout.text()).toContain('docrelay/service-api-key');
    expect(stdout.text()).not.toContain(String(key));
    const res = await fetch(`${endpoints.emulator.baseUrl}/v1.0/workspace`, {
      headers: { 'x-api-key': String(key) },
    });
    expect(res.status).toBe(200);
    controller.abort();
    await expect(done).resolves.toBe(0);
    const after = JSON.parse(await readFile(join(dir, 'data', 'endpoints.json'), 'utf8')) as object;
    expect(after).not.toHaveProperty('emulator');
  });

  it('rejects a bad option as a usage error', async () => {
    const stderr = collector();
    const code = await main(['emulator', '--port', 'x'], {
      stdout: collector().stream,
      stderr: stderr.stream,
      env: {},
      cwd: dir,
    });
    expect(code).toBe(2);
    expect(stderr.text()).toContain('--port');
  });

  it('runs as a process that exits 0 on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [join(__dirname, '../../bin/docrelay.js'), 'emulator', '--port', '0'],
      {
        env: { ...process.env, DOCRELAY_DATA_DIR: join(dir, 'data'), DOCGEN_API_KEY: 'process-key' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitUntil(
        'the emulator process to print its ready line',
        async () => {
          if (child.exitCode !== null) throw new Error(`emulator exited with ${child.exitCode}: ${output}`);
          return output.includes('ready') ? true : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 50, describe: () => output },
      );
      expect(output).toContain('DOCGEN_API_KEY');
      expect(output).not.toContain('process-key');
      const url = /ready at (\S+)/.exec(output)?.[1];
      const res = await fetch(`${url}/v1.0/workspace`, { headers: { 'x-api-key': 'process-key' } });
      expect(res.status).toBe(200);
      child.kill('SIGTERM');
      await expect(exited).resolves.toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
