/**
 * A scriptable stand-in for the Document Generation Service on a loopback port, for the client's unit tests:
 * each test sets a handler and reads back the requests the client made.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { DocgenError } from '../../functions/docgen/errors';
import type { Template } from '../../functions/docgen/types';

/** A request as the fake service received it. */
export interface RecordedRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** Answers one request. */
export type FakeHandler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

/** A running fake service. */
export interface FakeService {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly requests: RecordedRequest[];
  handle(handler: FakeHandler): void;
  close(): Promise<void>;
}

/** Starts a fake service on 127.0.0.1 and a random port. */
export async function startFakeService(initial?: FakeHandler): Promise<FakeService> {
  let handler: FakeHandler = initial ?? ((_req, res) => sendJson(res, 404, { message: 'no handler' }));
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      Promise.resolve(handler(recorded, res)).catch((error: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { message: String(error) });
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    handle: (next) => {
      handler = next;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Writes a JSON answer. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}

/** A template file as the service lists it. */
export function templateFile(id: string, filename: string): Template['files'][number] {
  return {
    id,
    filename,
    mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    size: 1234,
    createdDateTime: '2024-01-01T00:00:00Z',
    lastModifiedDateTime: '2024-01-02T00:00:00Z',
    usedProperties: [{ name: 'Customer', required: true }],
  };
}

/** A template with the given files. */
export function template(
  id: string,
  files: Template['files'] = [templateFile(`${id}-f1`, 'main.docx')],
): Template {
  return {
    id,
    name: `Template ${id}`,
    createdDateTime: '2024-01-01T00:00:00Z',
    files,
    properties: [
      { type: 'text', name: 'Customer', label: 'Customer name' },
      { type: 'select', name: 'Currency', allowedValues: ['EUR', 'USD'], defaultValue: 'EUR' },
    ],
  };
}

/** A generated document as the service answers create document, with the link under `linkField`. */
export function documentBody(
  downloadUrl: string,
  linkField: '@api.downloadUrl' | '@api.downloadURL' = '@api.downloadUrl',
): Record<string, unknown> {
  return {
    id: 'doc-1',
    name: 'Invoice 1',
    data: { Customer: 'ACME', AutomaticNumber: 7, Description: null },
    templateReference: { id: '9001', name: 'Invoice' },
    files: [
      {
        id: '0b5c6a4e-0000-4000-8000-000000000001',
        mimeType: 'text/plain',
        filename: 'invoice.txt',
        size: 11,
        templateFileReference: { id: '9001-f1', name: 'main.docx', templateId: '9001' },
        isTemporary: true,
        [linkField]: downloadUrl,
      },
    ],
  };
}

/** Resolves to the DocgenError a call rejects with; fails the test when it resolves or rejects otherwise. */
export async function failure(promise: Promise<unknown>): Promise<DocgenError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DocgenError) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

/** Reads a stream to its end. */
export async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}
