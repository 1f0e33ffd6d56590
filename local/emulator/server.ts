/**
 * An embeddable emulator of the Document Generation Service over node:http: the interface page's operations
 * and rules, plus faults, switchable readings, an outage switch, statistics and a key-guarded `/_emulator/`
 * admin API. Routes are in `routes/`; where the page says "not shown": docs/decisions.md, "Service emulator".
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Workspace } from '../../functions/docgen/types';
import { DownloadLinks } from './download-links';
import { EmulatorHttpError, injectedError } from './errors';
import { answerJson, type Exchange } from './exchange';
import { defaultFaultSettings, FaultDice, type FaultSettings, mergeFaultSettings } from './faults';
import { errorBody, genericError } from './http-io';
import { defaultReadings, mergeReadings, type ServiceReadings } from './readings';
import { adminPrefix, adminRoute } from './routes/admin';
import { apiRoute } from './routes/api';
import { downloadPath, downloadRoute } from './routes/download';
import { explorerPath, explorerRoute } from './routes/explorer';
import { apiPrefix } from './routes/templates';
import { EmulatorState } from './state';
import { type EmulatorStats, StatsRecorder } from './stats';
import {
  largeFileTemplate,
  loadTemplatesDir,
  type StoredTemplate,
  sampleTemplatesDir,
  syntheticTemplates,
  TemplateStore,
} from './template-store';

/** Re-exported so that a user of the emulator needs one import. */
export type { FaultSettings } from './faults';
/** Re-exported so that a user of the emulator needs one import. */
export type { ServiceReadings } from './readings';
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
  /** Readings of the page's ambiguities (create status, link field, 413 message). @default defaultReadings */
  readonly readings?: Partial<ServiceReadings>;
  /** Seed of the fault dice and of synthetic file bytes. @default random */
  readonly seed?: number;
  /**
   * Hidden, for benchmarks: adds template 9099 "Large file" (file 90991) whose generated files are padded
   * to this many bytes, with a deterministic filler made on the fly, so memory holds one chunk per
   * stream; stats carry each file's sha256 and size. @default no such template
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
  /** Merges readings (throws on a value that is not one of the documented readings). */
  setReadings(readings: Partial<ServiceReadings>): void;
  /** The current readings. */
  readings(): ServiceReadings;
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

/** The workspace id the emulator derives from an API key: UUID-shaped, stable across restarts. */
export function workspaceIdFor(apiKey: string): string {
  const hex = createHash('sha256').update(`docrelay-emulator-workspace:${apiKey}`).digest('hex');
  const variant = ((Number.parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Starts an emulator; resolves once it listens. */
export async function startEmulator(options: EmulatorOptions): Promise<EmulatorHandle> {
  const state = await createState(options);
  const server: Server = createServer((req, res) => {
    void route(state, req, res);
  });
  const sweeper = setInterval(() => state.setup.links.sweep(), 30_000);
  sweeper.unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  state.baseUrl = (options.publicUrl ?? `http://${urlHost(options.host ?? '127.0.0.1')}:${port}`).replace(
    /\/+$/,
    '',
  );

  const { stats, links, workspace } = state.setup;
  let stopped: Promise<void> | undefined;
  return {
    url: state.baseUrl,
    port,
    apiKey: options.apiKey,
    workspace: { ...workspace },
    setFaults: (patch) => state.setFaults(patch),
    faults: () => state.faults,
    setReadings: (patch) => state.setReadings(patch),
    readings: () => state.readings,
    stats: () => stats.snapshot(),
    resetStats: () => stats.reset(),
    pause: () => {
      state.paused = true;
    },
    resume: () => {
      state.paused = false;
    },
    storage: () => ({ files: links.count, bytesHeld: links.bytesHeld }),
    stop: () => {
      stopped ??= new Promise<void>((resolve) => {
        state.stopping.abort();
        clearInterval(sweeper);
        links.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopped;
    },
  };
}

/** Validates the options and builds the emulator's state (templates loaded, faults and readings merged). */
async function createState(options: EmulatorOptions): Promise<EmulatorState> {
  if (typeof options.apiKey !== 'string' || options.apiKey === '') throw new Error('apiKey is required');
  const pageSize = options.pageSize ?? 200;
  if (!Number.isInteger(pageSize) || pageSize < 1) throw new Error('pageSize must be a positive integer');
  const clock = options.clock ?? Date.now;
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 32);
  const templates: StoredTemplate[] = await loadTemplatesDir(options.templatesDir ?? sampleTemplatesDir);
  if ((options.extraTemplates ?? 0) > 0) templates.push(...syntheticTemplates(options.extraTemplates ?? 0));
  if (options.syntheticFileBytes !== undefined) templates.push(largeFileTemplate(options.syntheticFileBytes));
  const workspace: Workspace = options.workspace ?? {
    id: workspaceIdFor(options.apiKey),
    displayName: 'Docrelay Emulator',
  };
  return new EmulatorState(
    {
      apiKey: options.apiKey,
      workspace,
      store: new TemplateStore(templates),
      pageSize,
      bodyLimitBytes: options.bodyLimitBytes ?? 1024 * 1024,
      enforceRequired: options.enforceRequired ?? true,
      seed,
      clock,
      dice: new FaultDice(seed),
      stats: new StatsRecorder(),
      links: new DownloadLinks({ clock, maxStoredBytes: options.maxStoredBytes }),
    },
    mergeFaultSettings(defaultFaultSettings(options.linkTtlMs ?? 3_600_000), options.faults ?? {}),
    mergeReadings(defaultReadings, options.readings ?? {}),
  );
}

/** Routes one request: admin, explorer, the outage switch, downloads, operations; errors become JSON. */
async function route(state: EmulatorState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://emulator.invalid');
  const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
  const isAdmin = path.startsWith(adminPrefix);
  const ex: Exchange = { req, res, url, path, recorded: !isAdmin && path !== explorerPath, delayMs: 0 };
  try {
    if (isAdmin) return await adminRoute(state, ex);
    if (path === explorerPath) return explorerRoute(res);
    if (state.paused) {
      ex.fault = 'paused';
      throw injectedError(503, state.faults.retryAfterSeconds);
    }
    if (path === downloadPath) return await downloadRoute(state, ex);
    if (path === apiPrefix || path.startsWith(`${apiPrefix}/`)) return await apiRoute(state, ex);
    throw new EmulatorHttpError(
      404,
      'NotFound',
      `No operation at ${path}; operations live under ${apiPrefix}`,
    );
  } catch (error) {
    if (res.headersSent || res.destroyed || state.stopping.signal.aborted) {
      if (!res.writableEnded) res.destroy();
      return;
    }
    const httpError = error instanceof EmulatorHttpError ? error : genericError(500);
    answerJson(state, ex, httpError.status, errorBody(httpError), { ...httpError.headers });
  }
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}
