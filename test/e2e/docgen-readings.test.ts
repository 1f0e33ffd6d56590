/**
 * The client against the emulator in each reading of the interface page's ambiguities: create
 * answered 201 or 200, the link spelled `@api.downloadUrl` or `@api.downloadURL`, the 413 worded "Request
 * entity too large" or "Payload too large"; the readings switched at start and through the admin API; an
 * ambiguous create (made, then answered 503); and the template that uses every property type.
 */
import { DocgenClient, staticApiKey } from '../../functions/docgen/client';
import { DocgenPayloadTooLargeError } from '../../functions/docgen/errors';
import type { ServiceReadings } from '../../local/emulator/readings';
import { type EmulatorHandle, startEmulator } from '../../local/emulator/server';
import { failure, readAll } from '../helpers/fake-service';

const API_KEY = 'e2e-readings-key-3c9a1f07';

let emulator: EmulatorHandle;

beforeAll(async () => {
  emulator = await startEmulator({ apiKey: API_KEY, bodyLimitBytes: 4 * 1024, seed: 16 });
});

afterAll(async () => {
  await emulator.stop();
});

beforeEach(() => {
  emulator.setReadings({
    createStatus: 201,
    linkField: '@api.downloadUrl',
    payloadTooLargeMessage: 'Request entity too large',
  });
  emulator.resetStats();
});

const client = (): DocgenClient =>
  new DocgenClient({ baseUrl: emulator.url, apiKey: staticApiKey(API_KEY), sleep: async () => undefined });

async function admin(method: 'GET' | 'PUT', body?: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${emulator.url}/_emulator/readings`, {
    method,
    headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

describe.each<[ServiceReadings['createStatus'], ServiceReadings['linkField']]>([
  [201, '@api.downloadUrl'],
  [200, '@api.downloadURL'],
  [201, '@api.downloadURL'],
  [200, '@api.downloadUrl'],
])('create answered %i with the link in %s', (createStatus, linkField) => {
  it('gives a document whose file downloads byte-exact', async () => {
    emulator.setReadings({ createStatus, linkField });
    const created = await client().createDocument({ templateId: '9003', data: { Title: 'T', Body: 'B' } });
    const [answer] = emulator.stats().requests.filter((r) => r.method === 'POST');
    expect(answer?.status).toBe(createStatus);
    const file = created.files[0];
    if (file === undefined) throw new Error('no file');
    const bytes = await readAll((await client().download(file)).body);
    expect(bytes.toString('utf8')).toBe('T\n\nB\n');
    const [record] = emulator.stats().createdDocuments;
    expect(record?.files[0]?.size).toBe(bytes.length);
  });
});

describe.each<ServiceReadings['payloadTooLargeMessage']>(['Request entity too large', 'Payload too large'])(
  'a 413 worded "%s"',
  (message) => {
    it('is a DocgenPayloadTooLargeError that quotes the service and is not retried', async () => {
      emulator.setReadings({ payloadTooLargeMessage: message });
      const error = await failure(
        client().createDocument({ templateId: '9003', data: { Title: 'T', Body: 'x'.repeat(8 * 1024) } }),
      );
      expect(error).toBeInstanceOf(DocgenPayloadTooLargeError);
      expect(error).toMatchObject({ status: 413, serviceMessage: message, attempts: 1 });
    });
  },
);

describe('readings', () => {
  it('are set at start', async () => {
    const other = await startEmulator({ apiKey: API_KEY, readings: { createStatus: 200 } });
    try {
      expect(other.readings()).toEqual({
        createStatus: 200,
        linkField: '@api.downloadUrl',
        payloadTooLargeMessage: 'Request entity too large',
      });
    } finally {
      await other.stop();
    }
  });

  it('are read and switched through the admin API, an invalid one changing nothing', async () => {
    const put = await admin('PUT', { linkField: '@api.downloadURL', createStatus: 200 });
    expect(put).toEqual({
      status: 200,
      body: {
        createStatus: 200,
        linkField: '@api.downloadURL',
        payloadTooLargeMessage: 'Request entity too large',
      },
    });
    expect((await admin('GET')).body).toEqual(put.body);
    expect((await admin('PUT', { createStatus: 204 })).status).toBe(400);
    expect(emulator.readings()).toEqual(put.body);
  });
});

describe('an ambiguous create (made, then answered 503)', () => {
  it('is retried by the client: the service made two documents, the caller gets the second', async () => {
    emulator.setFaults({ failAfterCreateNext: 1, retryAfterSeconds: 0 });
    const created = await client().createDocument({ templateId: '9003', data: { Title: 'T', Body: 'B' } });
    const posts = emulator.stats().requests.filter((r) => r.method === 'POST');
    expect(posts.map((r) => [r.status, r.fault])).toEqual([
      [503, 'failAfterCreate'],
      [201, undefined],
    ]);
    const documents = emulator.stats().createdDocuments;
    expect(documents).toHaveLength(2);
    expect(created.id).toBe(documents[1]?.documentId);
    expect(emulator.faults().failAfterCreateNext).toBeUndefined();
  });
});

describe('template 9005 (every property type)', () => {
  it('lists each property with its type and renders typed values', async () => {
    const template = await client().getTemplate('9005');
    expect(template.properties?.find((p) => p.name === 'Items')).toMatchObject({
      type: 'string',
      multipleValues: true,
    });
    const created = await client().createDocument({
      templateId: '9005',
      data: {
        'Order Id': 'A-17',
        Customer: 'Ada',
        Quantity: 3,
        'Unit Price': 9.5,
        'Gift Wrap': true,
        'Order Date': '2024-02-29',
        'Ship To': { city: 'Oslo' },
        Items: ['pen', 'ink'],
        'Lot Numbers': [4, 5],
      },
    });
    const file = created.files[0];
    if (file === undefined) throw new Error('no file');
    expect((await readAll((await client().download(file)).body)).toString('utf8')).toBe(
      [
        'Order A-17 for Ada',
        'Quantity: 3 at 9.5',
        'Gift wrap: true',
        'Ordered on: 2024-02-29 (normal)',
        'Ship to: {"city":"Oslo"}',
        'Items: pen, ink',
        'Lots: 4, 5',
        '',
      ].join('\n'),
    );
  });
});
