/**
 * The typed client of the Document Generation Service: API calls carry `x-api-key`, retry transient failures
 * within a budget and validate answers (wire.ts, status-errors.ts); downloads stream without the key, only
 * from allowed origins (download.ts).
 */

import type { DocumentService, TemplateSource } from '../ports/document-service';
import { downloadOnce, fetchGet, type HttpGet, nodeHttpGet, tokenParts } from './download';
import { checkDownloadUrl, type DownloadPolicy, makeDownloadPolicy } from './download-guard';
import { DocgenBadResponseError, DocgenError, DocgenTemplateFileRequiredError } from './errors';
import {
  type ApiRequest,
  type ApiResponse,
  fetchExchange,
  type HttpExchange,
  nodeHttpExchange,
} from './exchange';
import { redactUrl } from './redact';
import {
  DEFAULT_RETRY_POLICY,
  defaultSleep,
  type RetryEnvironment,
  type RetryInfo,
  type RetryPolicy,
  withRetry,
} from './retry';
import { statusError, transportError } from './status-errors';
import type {
  CreateDocumentRequest,
  DocumentFile,
  DownloadOptions,
  DownloadResult,
  GeneratedDocument,
  Template,
  TemplatePage,
  Workspace,
} from './types';
import {
  documentSchema,
  parseAnswer,
  templatePageSchema,
  templateSchema,
  type WireSchema,
  workspaceListSchema,
} from './wire';

export { MAX_DOWNLOAD_REDIRECTS } from './download';
export { extractServiceMessage } from './status-errors';
export type { CreateDocumentRequest, DownloadResult } from './types';

/** Where the client gets its API key; `refresh` re-reads it after a 401/403 (rotation without a deploy). */
export interface ApiKeyProvider {
  /** The current key. */
  get(): Promise<string>;
  /** Forgets a cached key; may resolve to the new one. */
  // biome-ignore lint/suspicious/noConfusingVoidType: a cache-dropping refresh (SecretSource.refresh) returns void.
  refresh?(): Promise<string> | void;
}

/** A key provider for a fixed key (tests, `DOCGEN_API_KEY`). */
export function staticApiKey(key: string): ApiKeyProvider {
  return { get: async () => key };
}

/** Options of `DocgenClient`. */
export interface DocgenClientOptions {
  /** The service root; operations live under `{baseUrl}/v1.0`. A trailing slash is optional. */
  readonly baseUrl: string;
  /** Where the API key comes from. */
  readonly apiKey: ApiKeyProvider;
  /** Origins besides the service's own that download links may point to. @default [] */
  readonly downloadOrigins?: readonly string[];
  /** A fetch implementation for API calls and downloads. @default none: node:http/node:https (./exchange.ts) */
  readonly fetch?: typeof fetch;
  /** Retry policy overrides. @default DEFAULT_RETRY_POLICY */
  readonly retry?: Partial<RetryPolicy>;
  /** Timeout of one request (for a download: until headers, then between chunks). @default 30_000 */
  readonly timeoutMs?: number;
  /** Follow `http:` download links. @default true only when baseUrl is http on a loopback host */
  readonly allowInsecureDownloads?: boolean;
  /** Waits between attempts (injectable for tests). @default a timer */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Jitter source in [0, 1). @default Math.random */
  readonly random?: () => number;
  /** Clock for the total retry budget (injectable for tests). @default Date.now */
  readonly now?: () => number;
  /** Hears every retry before its wait (metrics, logs). */
  readonly onRetry?: (info: RetryInfo) => void;
}

/** Bound on template pages followed, against a service that never stops sending `@odata.nextLink`. */
export const MAX_TEMPLATE_PAGES = 10_000;

/** The Document Generation Service client. */
export class DocgenClient implements DocumentService, TemplateSource {
  private readonly base: string;
  private readonly apiKey: ApiKeyProvider;
  private readonly exchangeImpl: HttpExchange;
  private readonly downloadGet: HttpGet;
  private readonly timeoutMs: number;
  private readonly downloadPolicy: DownloadPolicy;
  private readonly retryEnv: RetryEnvironment;
  /** Keys seen, so that a service echoing one back never gets it into a message. */
  private readonly secrets = new Set<string>();

  constructor(options: DocgenClientOptions) {
    let parsed: URL;
    try {
      parsed = new URL(options.baseUrl);
    } catch {
      throw new TypeError(`the service base URL "${redactUrl(options.baseUrl)}" is not a URL`);
    }
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
      throw new TypeError(`the service base URL must be http(s), got ${parsed.protocol}`);
    }
    this.base = `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
    this.apiKey = options.apiKey;
    this.exchangeImpl = options.fetch === undefined ? nodeHttpExchange : fetchExchange(options.fetch);
    this.downloadGet = options.fetch === undefined ? nodeHttpGet : fetchGet(options.fetch);
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.downloadPolicy = makeDownloadPolicy(
      this.base,
      options.downloadOrigins,
      options.allowInsecureDownloads,
    );
    this.retryEnv = {
      policy: { ...DEFAULT_RETRY_POLICY, ...stripUndefined(options.retry ?? {}) },
      sleep: options.sleep ?? defaultSleep,
      random: options.random ?? Math.random,
      now: options.now ?? Date.now,
      onRetry: options.onRetry,
    };
  }

  /** The service origin (`https://host[:port]`). */
  get origin(): string {
    return new URL(this.base).origin;
  }

  /** The workspaces of the API key (the service always lists exactly one). */
  async listWorkspaces(): Promise<Workspace[]> {
    const body = await this.call('listWorkspaces', 'GET', this.url('workspace'), workspaceListSchema, {
      what: 'workspace list',
    });
    return body.value;
  }

  /** The workspace of the API key: the one element of the workspace list. */
  async getCurrentWorkspace(): Promise<Workspace> {
    const [first] = await this.listWorkspaces();
    if (first === undefined) {
      throw new DocgenBadResponseError('listWorkspaces: the service listed no workspace for this API key', {
        operation: 'listWorkspaces',
        status: 200,
      });
    }
    return first;
  }

  /** Every active template, newest first, following `@odata.nextLink` page after page. */
  async *listTemplates(): AsyncIterable<Template> {
    let url: URL | undefined = this.url('templates');
    const seen = new Set<string>();
    for (let page = 1; url !== undefined; page++) {
      if (page > MAX_TEMPLATE_PAGES) {
        throw new DocgenBadResponseError(
          `listTemplates: gave up after ${MAX_TEMPLATE_PAGES} pages of templates (the service keeps sending @odata.nextLink)`,
          { operation: 'listTemplates' },
        );
      }
      seen.add(url.href);
      const body: TemplatePage = await this.call('listTemplates', 'GET', url, templatePageSchema, {
        what: 'template list',
      });
      for (const template of body.value) yield template;
      url = this.nextPageUrl(body['@odata.nextLink'], seen);
    }
  }

  /** Every active template as one array (all pages). */
  async listAllTemplates(): Promise<Template[]> {
    const all: Template[] = [];
    for await (const template of this.listTemplates()) all.push(template);
    return all;
  }

  /** One template, with its properties. */
  async getTemplate(id: string): Promise<Template> {
    return this.call('getTemplate', 'GET', this.url(`templates/${encodeURIComponent(id)}`), templateSchema, {
      what: `template ${id}`,
    });
  }

  /**
   * Generates a document. A multi-file template needs `templateFileId`, checked against the template's files
   * before any create request (the template is read first when neither is given). Both documented success
   * statuses, 201 and the example's 200, are accepted.
   */
  async createDocument(request: CreateDocumentRequest): Promise<GeneratedDocument> {
    const { templateId, templateFileId } = request;
    if (templateFileId === undefined) {
      const template = request.template ?? (await this.getTemplate(templateId));
      if (template.files.length > 1) {
        throw fileRequired(template, `has ${template.files.length} files; choose one with templateFileId`);
      }
    } else if (
      request.template !== undefined &&
      !request.template.files.some((f) => f.id === templateFileId)
    ) {
      throw fileRequired(request.template, `has no file ${templateFileId}; its files are`);
    }
    const url = this.url(`templates/${encodeURIComponent(templateId)}/documents`);
    // Written literally: '@' is valid in a query, and the service documents the parameter by this name.
    if (templateFileId !== undefined)
      url.search = `?@api.templateFileId=${encodeURIComponent(templateFileId)}`;
    return this.call('createDocument', 'POST', url, documentSchema, {
      what: `template ${templateId}`,
      body: JSON.stringify({ data: request.data }),
      expect: [200, 201],
      ...(request.retryBudgetMs === undefined ? {} : { retryBudgetMs: request.retryBudgetMs }),
    });
  }

  /**
   * Streams a generated file. Sends no API key (the link carries its own token), follows only links and
   * redirects on allowed origins, and reports an expired or removed link as `DOCGEN_LINK_EXPIRED`.
   */
  async download(file: DocumentFile | string, options: DownloadOptions = {}): Promise<DownloadResult> {
    const link = typeof file === 'string' ? file : file.downloadUrl;
    const start = checkDownloadUrl(link, this.downloadPolicy, `${this.base}/`);
    const context = {
      get: this.downloadGet,
      policy: this.downloadPolicy,
      timeoutMs: this.timeoutMs,
      secrets: [...this.secrets, ...tokenParts(start)],
      now: this.retryEnv.now,
      signal: options.signal,
    };
    return withRetry('download', () => downloadOnce(start, context), {
      ...this.budgeted(options.retryBudgetMs),
      signal: options.signal,
    });
  }

  /** The retry environment, its total budget cut to `budgetMs` when that is shorter. */
  private budgeted(budgetMs: number | undefined): RetryEnvironment {
    if (budgetMs === undefined || budgetMs >= this.retryEnv.policy.totalBudgetMs) return this.retryEnv;
    return { ...this.retryEnv, policy: { ...this.retryEnv.policy, totalBudgetMs: Math.max(0, budgetMs) } };
  }

  private url(path: string): URL {
    return new URL(`${this.base}/v1.0/${path}`);
  }

  private nextPageUrl(next: string | undefined, seen: Set<string>): URL | undefined {
    if (next === undefined || next.trim() === '') return undefined;
    const refuse = (url: string | URL, why: string): DocgenBadResponseError =>
      new DocgenBadResponseError(`listTemplates: @odata.nextLink ${redactUrl(url)} ${why}`, {
        operation: 'listTemplates',
      });
    let url: URL;
    try {
      url = new URL(next, `${this.base}/`);
    } catch {
      throw refuse(next, 'is not a URL');
    }
    // Following a link sends the API key: never to another origin.
    if (url.origin !== this.origin)
      throw refuse(url, `leaves the service origin ${this.origin}; not followed`);
    if (seen.has(url.href)) throw refuse(url, 'repeats a page already read (a loop); stopped');
    return url;
  }

  /** One API operation: key, request, refresh-once on 401/403, retries, status mapping, validation. */
  private async call<T>(
    operation: string,
    method: 'GET' | 'POST',
    url: URL,
    schema: WireSchema<T>,
    opts: { what: string; body?: string; expect?: readonly number[]; retryBudgetMs?: number },
  ): Promise<T> {
    const expect = opts.expect ?? [200];
    let refreshed = false;
    let requests = 0;
    const send = async (key: string): Promise<ApiResponse> => {
      requests++;
      return this.exchange(operation, url, {
        method,
        headers: {
          accept: 'application/json',
          'x-api-key': key,
          ...(opts.body === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' }),
        },
        body: opts.body,
      });
    };
    try {
      return await withRetry(
        operation,
        async () => {
          let response = await send(await this.currentKey());
          if ((response.status === 401 || response.status === 403) && !refreshed && this.apiKey.refresh) {
            refreshed = true;
            const fresh = await this.apiKey.refresh();
            const key = typeof fresh === 'string' && fresh !== '' ? fresh : await this.currentKey();
            this.secrets.add(key);
            response = await send(key);
          }
          const secrets = [...this.secrets];
          if (expect.includes(response.status)) {
            return parseAnswer(operation, response.status, response.text, schema, secrets);
          }
          throw statusError(
            {
              operation,
              what: opts.what,
              requestBytes: opts.body === undefined ? 0 : Buffer.byteLength(opts.body, 'utf8'),
              keyRefreshed: this.apiKey.refresh !== undefined,
              secrets,
              now: this.retryEnv.now(),
            },
            { status: response.status, header: (name) => response.header(name), text: response.text },
          );
        },
        this.budgeted(opts.retryBudgetMs),
      );
    } catch (error) {
      if (error instanceof DocgenError && requests > 0) error.attempts = requests;
      throw error;
    }
  }

  private async currentKey(): Promise<string> {
    const key = await this.apiKey.get();
    this.secrets.add(key);
    return key;
  }

  /** One request and its whole body within the timeout; transport failures become client errors. */
  private async exchange(
    operation: string,
    url: URL,
    request: Omit<ApiRequest, 'signal'>,
  ): Promise<ApiResponse> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    try {
      return await this.exchangeImpl(url, { ...request, signal: controller.signal });
    } catch (error) {
      const failure = controller.signal.aborted ? 'timeout' : 'network';
      throw transportError(operation, url, error, failure, this.timeoutMs, [...this.secrets]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function fileRequired(template: Template, problem: string): DocgenTemplateFileRequiredError {
  const files = template.files.map((file) => ({ id: file.id, filename: file.filename }));
  const list = files.map((file) => `${file.id} (${file.filename})`).join(', ');
  return new DocgenTemplateFileRequiredError(`template ${template.id} ${problem}: ${list}`, files);
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
