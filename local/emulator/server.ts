/**
 * An embeddable emulator of the Document Generation Service, over node:http. It implements every operation
 * and rule of the service's interface page (workspace, template list with pagination, single template,
 * create document with real .docx/.txt rendering, temporary download links) and adds what tests and
 * benchmarks need: injected faults, an outage switch, request statistics and an admin API under
 * `/_emulator/` guarded by the same API key.
 *
 * Choices where the interface page says "not shown" (also in docs and the report):
 * - error body `{ "error": { "code": "<Code>", "message": "<text>" } }`;
 * - missing or wrong `x-api-key`: 401 `Unauthorized`;
 * - unknown or inactive template, unknown workspace id, unknown path: 404 `NotFound`;
 * - invalid body, non-object `data`, a value of the wrong type, a select value outside allowedValues, a
 *   missing required value: 400 `BadRequest` naming the property;
 * - multi-file template without `@api.templateFileId`, or an id that is not one of the template's files:
 *   400 `BadRequest` naming the files;
 * - a body that is not JSON by its Content-Type: 415; a body over the limit: 413 "Request entity too large";
 * - download link unknown, with a wrong token or expired: 404 (the file is removed when its link expires);
 * - paused (an outage): every request but the admin routes answers 503 with `Retry-After`.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Template, TemplatePage, Workspace } from '../../functions/docgen/types';
import { checkDocumentData, systemEntries } from './document-data';
import {
  DownloadLinks,
  downloadUrl,
  filePrefix,
  fileStream,
  type StoredContent,
  type StoredFile,
} from './download-links';
import { EmulatorHttpError, injectedError } from './errors';
import { defaultFaultSettings, FaultDice, type FaultSettings, mergeFaultSettings } from './faults';
import { errorBody, genericError, isJsonContentType, readBody, writeJson } from './http-io';
import { renderTemplateFile } from './renderer';
import { type EmulatorStats, type RequestRecord, StatsRecorder } from './stats';
import { digestPadded } from './synthetic-bytes';
import {
  decodeSkipToken,
  encodeSkipToken,
  largeFileTemplate,
  loadTemplatesDir,
  type StoredTemplate,
  type StoredTemplateFile,
  sampleTemplatesDir,
  syntheticTemplates,
  TemplateStore,
  templateListItem,
  templateResource,
} from './template-store';

/** Re-exported so that a user of the emulator needs one import. */
export type { FaultSettings } from './faults';
/** Re-exported so that a user of the emulator needs one import. */
export type { CreatedDocumentRecord, CreatedFileRecord, EmulatorStats, RequestRecord } from './stats';

/** Options of `startEmulator`. */
export interface EmulatorOptions {
  /** Port to listen on; 0 picks a free one. @default 0 */
  readonly port?: number;
  /** Interface to listen on. @default '127.0.0.1' */
  readonly host?: string;
  /** The one API key of the workspace. */
  readonly apiKey: string;
  /** Folder of templates (one sub-folder with a manifest per template). @default the shipped samples */
  readonly templatesDir?: string;
  /** Lifetime of download links. @default 3_600_000 (one hour, as the real service) */
  readonly linkTtlMs?: number;
  /** Synthetic active text templates added, to test pagination. @default 0 */
  readonly extraTemplates?: number;
  /** Page size of the template list. @default 200 */
  readonly pageSize?: number;
  /** Size limit of a write request's body. @default 1 MiB */
  readonly bodyLimitBytes?: number;
  /** Faults injected from the start. @default none */
  readonly faults?: Partial<FaultSettings>;
  /** Seed of the fault dice and of synthetic file bytes. @default random */
  readonly seed?: number;
  /**
   * Hidden, for benchmarks: adds template 9099 "Large file" (one text file, 90991) whose generated files
   * are padded to this many bytes (e.g. 512 MiB). The filler is deterministic and produced on the fly while
   * hashing at creation and while streaming a download, so memory holds only one chunk per stream; stats
   * carry each file's sha256 and size. @default no such template
   */
  readonly syntheticFileBytes?: number;
  /** Clock of link expiry and timestamps, in ms since the epoch. @default Date.now */
  readonly clock?: () => number;
  /** The workspace. @default an id derived from the API key, displayName "Docrelay Emulator" */
  readonly workspace?: Workspace;
  /** Reject a create-document request that lacks a value a file requires. @default true */
  readonly enforceRequired?: boolean;
  /** Bytes of generated files held in memory before the oldest are dropped. @default 256 MiB */
  readonly maxStoredBytes?: number;
  /** Base URL written in next-page and download links. @default http://{host}:{port} */
  readonly publicUrl?: string;
}

/** A running emulator. */
export interface EmulatorHandle {
  /** Base URL, e.g. http://127.0.0.1:PORT (operations live under `${url}/v1.0`). */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
  /** The API key it accepts. */
  readonly apiKey: string;
  /** The workspace of the API key. */
  readonly workspace: Workspace;
  /** Merges fault settings (throws on an out-of-range value). */
  setFaults(faults: Partial<FaultSettings>): void;
  /** The current fault settings. */
  faults(): FaultSettings;
  /** A snapshot of the statistics. */
  stats(): EmulatorStats;
  /** Forgets the statistics (not the documents nor the AutomaticNumber counter). */
  resetStats(): void;
  /** Starts an outage: every request but the admin routes answers 503 with Retry-After until `resume()`. */
  pause(): void;
  /** Ends the outage. */
  resume(): void;
  /** Generated files held for download, and the bytes they hold in memory (padded files hold only a prefix). */
  storage(): { files: number; bytesHeld: number };
  /** Stops listening, closes every connection and forgets the files. */
  stop(): Promise<void>;
}

const apiPrefix = '/v1.0';
const adminPrefix = '/_emulator/';
const adminBodyLimit = 64 * 1024;
const serverErrors = [500, 502, 503, 504] as const;

/** The workspace id the emulator derives from an API key: UUID-shaped, stable across restarts. */
export function workspaceIdFor(apiKey: string): string {
  const hex = createHash('sha256').update(`docrelay-emulator-workspace:${apiKey}`).digest('hex');
  const variant = ((Number.parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** State of one request while it is answered, for its stats record. */
interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly path: string;
  /** API and download requests are recorded; admin and explorer requests are not. */
  readonly recorded: boolean;
  delayMs: number;
  fault?: RequestRecord['fault'];
}

/** Starts an emulator; resolves once it listens. */
export async function startEmulator(options: EmulatorOptions): Promise<EmulatorHandle> {
  if (typeof options.apiKey !== 'string' || options.apiKey === '') throw new Error('apiKey is required');
  const pageSize = options.pageSize ?? 200;
  if (!Number.isInteger(pageSize) || pageSize < 1) throw new Error('pageSize must be a positive integer');
  const bodyLimitBytes = options.bodyLimitBytes ?? 1024 * 1024;
  const clock = options.clock ?? Date.now;
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 32);
  const enforceRequired = options.enforceRequired ?? true;
  const apiKeyDigest = createHash('sha256').update(options.apiKey).digest();
  const workspace: Workspace = options.workspace ?? {
    id: workspaceIdFor(options.apiKey),
    displayName: 'Docrelay Emulator',
  };

  const templates: StoredTemplate[] = await loadTemplatesDir(options.templatesDir ?? sampleTemplatesDir);
  if ((options.extraTemplates ?? 0) > 0) templates.push(...syntheticTemplates(options.extraTemplates ?? 0));
  if (options.syntheticFileBytes !== undefined) templates.push(largeFileTemplate(options.syntheticFileBytes));
  const store = new TemplateStore(templates);

  let faults = mergeFaultSettings(defaultFaultSettings(options.linkTtlMs ?? 3_600_000), options.faults ?? {});
  const dice = new FaultDice(seed);
  const stats = new StatsRecorder();
  const links = new DownloadLinks({ clock, maxStoredBytes: options.maxStoredBytes });
  const stopping = new AbortController();
  let paused = false;
  let automaticNumber = 0;
  let baseUrl = '';

  const record = (ex: Exchange, status: number): void => {
    if (!ex.recorded) return;
    stats.request({
      method: ex.req.method ?? 'GET',
      path: ex.path,
      status,
      hadApiKey: ex.req.headers['x-api-key'] !== undefined,
      delayMs: ex.delayMs,
      at: clock(),
      ...(ex.fault === undefined ? {} : { fault: ex.fault }),
    });
  };

  const json = (ex: Exchange, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    record(ex, status);
    writeJson(ex.res, status, body, headers);
  };

  const authorized = (req: IncomingMessage): boolean => {
    const key = req.headers['x-api-key'];
    if (typeof key !== 'string') return false;
    // Digests have equal lengths, so the comparison is constant-time whatever the key's length.
    return createHash('sha256').update(key).digest().equals(apiKeyDigest);
  };

  const requireKey = (req: IncomingMessage): void => {
    if (!authorized(req)) {
      throw new EmulatorHttpError(
        401,
        'Unauthorized',
        req.headers['x-api-key'] === undefined ? 'Missing x-api-key header' : 'Invalid API key',
      );
    }
  };

  const delay = async (ex: Exchange, ms: number): Promise<void> => {
    if (ms <= 0) return;
    ex.delayMs += ms;
    await sleep(ms, undefined, { signal: stopping.signal });
  };

  const methodNotAllowed = (allowed: string): EmulatorHttpError =>
    new EmulatorHttpError(405, 'MethodNotAllowed', `Use ${allowed} on this path`, { allow: allowed });

  // --- operations -------------------------------------------------------------------------------------

  const listTemplates = (ex: Exchange): void => {
    const token = ex.url.searchParams.get('$skiptoken');
    const offset = token === null ? 0 : decodeSkipToken(token);
    if (offset === undefined) throw new EmulatorHttpError(400, 'BadRequest', 'Invalid $skiptoken');
    const { items, more } = store.page(offset, pageSize);
    const page: TemplatePage = { value: items.map(templateListItem) };
    if (more)
      page['@odata.nextLink'] =
        `${baseUrl}${apiPrefix}/templates?$skiptoken=${encodeSkipToken(offset + pageSize)}`;
    json(ex, 200, page);
  };

  const findTemplate = (id: string): StoredTemplate => {
    const template = store.get(id);
    if (template === undefined) throw new EmulatorHttpError(404, 'NotFound', `Template ${id} not found`);
    return template;
  };

  const describeFiles = (template: StoredTemplate): string =>
    template.files.map((f) => `${f.resource.id} (${f.resource.filename})`).join(', ');

  const chooseFile = (template: StoredTemplate, requested: string | null): StoredTemplateFile => {
    if (requested === null || requested === '') {
      const only = template.files.length === 1 ? template.files[0] : undefined;
      if (only !== undefined) return only;
      throw new EmulatorHttpError(
        400,
        'BadRequest',
        `Template ${template.id} has ${template.files.length} files: the query parameter @api.templateFileId is required, one of ${describeFiles(template)}`,
      );
    }
    const file = template.files.find((f) => f.resource.id === requested);
    if (file === undefined) {
      throw new EmulatorHttpError(
        400,
        'BadRequest',
        `Template ${template.id} has no file ${requested}; its files are ${describeFiles(template)}`,
      );
    }
    return file;
  };

  const createDocument = async (ex: Exchange, templateId: string): Promise<void> => {
    const raw = await readBody(ex.req, bodyLimitBytes);
    if (!isJsonContentType(ex.req.headers['content-type'])) {
      throw new EmulatorHttpError(
        415,
        'UnsupportedMediaType',
        'Content-Type must be application/json; charset=utf-8',
      );
    }
    const template = findTemplate(templateId);
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new EmulatorHttpError(400, 'BadRequest', 'The request body is not valid JSON');
    }
    const file = chooseFile(template, ex.url.searchParams.get('@api.templateFileId'));
    const { clientData, renderValues } = checkDocumentData(template, file, body, enforceRequired);
    stats.generationStarted();
    try {
      await generate(ex, template, file, clientData, renderValues);
    } finally {
      stats.generationEnded();
    }
  };

  const generate = async (
    ex: Exchange,
    template: StoredTemplate,
    file: StoredTemplateFile,
    clientData: ReturnType<typeof checkDocumentData>['clientData'],
    renderValues: ReturnType<typeof checkDocumentData>['renderValues'],
  ): Promise<void> => {
    await delay(ex, faults.generationLatencyMs);

    automaticNumber += 1;
    const number = automaticNumber;
    const now = new Date(clock());
    const system = systemEntries({ automaticNumber: number, now, template, workspace, clientData });
    const rendered = renderTemplateFile(file, renderValues);
    const fileId = randomUUID();
    const extension = extname(file.resource.filename);
    const filename = `${file.resource.filename.slice(0, file.resource.filename.length - extension.length)}-${number}${extension}`;
    let content: StoredContent;
    let digest: { sha256: string; size: number };
    if (file.padToBytes !== undefined) {
      const fileSeed = (seed ^ Math.imul(number, 0x9e3779b1)) >>> 0;
      content = { kind: 'padded', prefix: rendered, seed: fileSeed };
      digest = await digestPadded(rendered, file.padToBytes, fileSeed);
    } else {
      content = { kind: 'buffer', data: rendered };
      digest = { sha256: createHash('sha256').update(rendered).digest('hex'), size: rendered.length };
    }
    const stored = links.add(
      {
        fileId,
        filename,
        mimeType: file.resource.mimeType,
        size: digest.size,
        sha256: digest.sha256,
        content,
      },
      faults.linkTtlMs,
    );
    const documentId = randomUUID();
    stats.documentCreated({
      documentId,
      templateId: template.id,
      templateFileId: file.resource.id,
      files: [{ fileId, sha256: digest.sha256, size: digest.size }],
    });
    json(ex, 201, {
      id: documentId,
      name: String(system['Title']),
      data: { ...clientData, ...system },
      templateReference: { id: template.id, name: template.name },
      files: [
        {
          id: fileId,
          mimeType: file.resource.mimeType,
          filename,
          size: digest.size,
          templateFileReference: {
            id: file.resource.id,
            name: file.resource.filename,
            templateId: template.id,
          },
          isTemporary: true,
          '@api.downloadUrl': downloadUrl(baseUrl, fileId, stored.token),
        },
      ],
    });
  };

  const api = async (ex: Exchange): Promise<void> => {
    await delay(ex, faults.latencyMs);
    requireKey(ex.req);
    const failNext = faults.failNext;
    if (failNext !== undefined && failNext.count > 0) {
      const remaining = failNext.count - 1;
      faults = { ...faults, failNext: { ...failNext, count: remaining } };
      if (remaining === 0) delete faults.failNext;
      ex.fault = 'failNext';
      throw injectedError(failNext.status, faults.retryAfterSeconds);
    }
    if (dice.chance(faults.rate429)) {
      ex.fault = 'rate429';
      throw injectedError(429, faults.retryAfterSeconds);
    }
    if (dice.chance(faults.rate5xx)) {
      ex.fault = 'rate5xx';
      throw injectedError(dice.pick(serverErrors), faults.retryAfterSeconds);
    }
    const segments = ex.path
      .slice(apiPrefix.length + 1)
      .split('/')
      .map(decodeSegment);
    const method = ex.req.method ?? 'GET';
    const [collection, id, sub, ...rest] = segments;
    if (collection === 'workspace' && sub === undefined) {
      if (method !== 'GET') throw methodNotAllowed('GET');
      if (id === undefined) return json(ex, 200, { value: [workspace] });
      if (id.toLowerCase() !== workspace.id.toLowerCase()) {
        throw new EmulatorHttpError(404, 'NotFound', `Workspace ${id} not found`);
      }
      return json(ex, 200, workspace);
    }
    if (collection === 'templates' && sub === undefined) {
      if (method !== 'GET') throw methodNotAllowed('GET');
      if (id === undefined) return listTemplates(ex);
      const template: Template = templateResource(findTemplate(id));
      return json(ex, 200, template);
    }
    if (collection === 'templates' && id !== undefined && sub === 'documents' && rest.length === 0) {
      if (method !== 'POST') throw methodNotAllowed('POST');
      return createDocument(ex, id);
    }
    throw new EmulatorHttpError(404, 'NotFound', `No operation at ${ex.path}`);
  };

  const download = async (ex: Exchange): Promise<void> => {
    stats.downloadRequested(ex.req.headers);
    if (ex.req.method !== 'GET') throw methodNotAllowed('GET');
    const file = links.find(ex.url.searchParams.get('fileId') ?? '', ex.url.searchParams.get('token') ?? '');
    if (file === undefined) {
      throw new EmulatorHttpError(404, 'NotFound', 'The download link is unknown or has expired');
    }
    if (dice.chance(faults.downloadFailRate)) {
      ex.fault = 'downloadFail';
      throw genericError(500);
    }
    const truncate = dice.chance(faults.downloadTruncateRate);
    if (truncate) ex.fault = 'downloadTruncate';
    record(ex, 200);
    stats.downloadServed();
    ex.res.writeHead(200, downloadHeaders(file));
    if (truncate) {
      const part = filePrefix(file, Math.min(Math.floor(file.size / 2), 1024 * 1024));
      ex.res.write(part, () => ex.res.socket?.destroy());
      return;
    }
    await pipeline(fileStream(file), ex.res);
  };

  const admin = async (ex: Exchange): Promise<void> => {
    requireKey(ex.req);
    const method = ex.req.method ?? 'GET';
    const action = ex.path.slice(adminPrefix.length);
    const expect = (allowed: string): void => {
      if (method !== allowed) throw methodNotAllowed(allowed);
    };
    switch (action) {
      case 'faults':
        if (method === 'PUT') {
          const raw = await readBody(ex.req, adminBodyLimit);
          let patch: unknown;
          try {
            patch = JSON.parse(raw.toString('utf8') || '{}');
          } catch {
            throw new EmulatorHttpError(400, 'BadRequest', 'The request body is not valid JSON');
          }
          try {
            faults = mergeFaultSettings(faults, patch);
          } catch (error) {
            throw new EmulatorHttpError(400, 'BadRequest', (error as Error).message);
          }
        } else if (method !== 'GET') throw methodNotAllowed('GET, PUT');
        return json(ex, 200, copyFaults(faults));
      case 'stats':
        expect('GET');
        return json(ex, 200, stats.snapshot());
      case 'reset-stats':
        expect('POST');
        stats.reset();
        return json(ex, 200, { reset: true });
      case 'pause':
      case 'resume':
        expect('POST');
        paused = action === 'pause';
        return json(ex, 200, { paused });
      default:
        throw new EmulatorHttpError(404, 'NotFound', `No admin route at ${ex.path}`);
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://emulator.invalid');
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
    const isAdmin = path.startsWith(adminPrefix);
    const ex: Exchange = { req, res, url, path, recorded: !isAdmin && path !== '/api-explorer', delayMs: 0 };
    try {
      if (isAdmin) return await admin(ex);
      if (path === '/api-explorer') return explorer(res);
      if (paused) {
        ex.fault = 'paused';
        throw injectedError(503, faults.retryAfterSeconds);
      }
      if (path === '/download') return await download(ex);
      if (path === apiPrefix || path.startsWith(`${apiPrefix}/`)) return await api(ex);
      throw new EmulatorHttpError(
        404,
        'NotFound',
        `No operation at ${path}; operations live under ${apiPrefix}`,
      );
    } catch (error) {
      if (res.headersSent || res.destroyed || stopping.signal.aborted) {
        if (!res.writableEnded) res.destroy();
        return;
      }
      const httpError = error instanceof EmulatorHttpError ? error : genericError(500);
      json(ex, httpError.status, errorBody(httpError), { ...httpError.headers });
    }
  };

  const server: Server = createServer((req, res) => {
    void handle(req, res);
  });
  const sweeper = setInterval(() => links.sweep(), 30_000);
  sweeper.unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  baseUrl = (options.publicUrl ?? `http://${urlHost(options.host ?? '127.0.0.1')}:${port}`).replace(
    /\/+$/,
    '',
  );

  let stopped: Promise<void> | undefined;
  return {
    url: baseUrl,
    port,
    apiKey: options.apiKey,
    workspace: { ...workspace },
    setFaults: (patch) => {
      faults = mergeFaultSettings(faults, patch);
    },
    faults: () => copyFaults(faults),
    stats: () => stats.snapshot(),
    resetStats: () => stats.reset(),
    pause: () => {
      paused = true;
    },
    resume: () => {
      paused = false;
    },
    storage: () => ({ files: links.count, bytesHeld: links.bytesHeld }),
    stop: () => {
      stopped ??= new Promise<void>((resolve) => {
        stopping.abort();
        clearInterval(sweeper);
        links.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopped;
    },
  };
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new EmulatorHttpError(400, 'BadRequest', `Malformed path segment ${segment}`);
  }
}

const copyFaults = (faults: FaultSettings): FaultSettings => ({
  ...faults,
  ...(faults.failNext === undefined ? {} : { failNext: { ...faults.failNext } }),
});

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

function downloadHeaders(file: StoredFile): Record<string, string> {
  const ascii = file.filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return {
    'content-type': file.mimeType.startsWith('text/') ? `${file.mimeType}; charset=utf-8` : file.mimeType,
    'content-length': String(file.size),
    'content-disposition': `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(file.filename)}`,
    'cache-control': 'no-store',
  };
}

// The real service has a web API explorer at {base_url}/api-explorer; the emulator lists its operations.
function explorer(res: ServerResponse): void {
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>Document Generation Service emulator</title></head><body>
<h1>Document Generation Service emulator</h1><p>Every operation needs the header <code>x-api-key</code>.</p><ul>
<li>GET /v1.0/workspace</li><li>GET /v1.0/workspace/{id}</li><li>GET /v1.0/templates</li>
<li>GET /v1.0/templates/{id}</li><li>POST /v1.0/templates/{id}/documents[?@api.templateFileId={fileId}]</li>
</ul></body></html>`;
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(Buffer.byteLength(html)),
  });
  res.end(html);
}
