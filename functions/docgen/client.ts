/**
 * The typed client of the Document Generation Service (docs: /work/shared/docgen-service-interface.md).
 * Every API call carries `x-api-key`, is retried when the failure is transient (429, 5xx, network, timeout)
 * within a bounded budget, and has its answer validated; downloads stream the file without the key and only
 * from allowed origins. Nothing here knows whether it runs in Lambda, locally or in a test.
 */
import { Readable, Transform } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { z } from 'zod';
import { checkDownloadUrl, type DownloadPolicy, makeDownloadPolicy } from './download-guard';
import {
  DocgenAbortedError,
  DocgenAuthError,
  DocgenBadRequestError,
  DocgenBadResponseError,
  DocgenError,
  type DocgenErrorDetails,
  DocgenLinkExpiredError,
  DocgenNetworkError,
  DocgenNotFoundError,
  DocgenPayloadTooLargeError,
  DocgenRateLimitedError,
  DocgenTemplateFileRequiredError,
  DocgenTimeoutError,
  DocgenUnavailableError,
} from './errors';
import { isErrorLike, redactUrl, sanitizeCause, scrubText } from './redact';
import {
  DEFAULT_RETRY_POLICY,
  defaultSleep,
  parseRetryAfter,
  type RetryEnvironment,
  type RetryInfo,
  type RetryPolicy,
  withRetry,
} from './retry';
import type {
  DocumentData,
  DocumentFile,
  GeneratedDocument,
  Template,
  TemplateFile,
  TemplatePage,
  TemplateProperty,
  Workspace,
} from './types';

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
  /** The fetch implementation. @default globalThis.fetch */
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

/** What `createDocument` takes. */
export interface CreateDocumentRequest {
  /** The template to generate from. */
  readonly templateId: string;
  /** Property name to value. */
  readonly data: DocumentData;
  /** The template file to generate; required for a multi-file template. */
  readonly templateFileId?: string;
  /** The template, when the caller already has it (saves a request to learn its files). */
  readonly template?: Template;
}

/** A download in progress: the body streams, nothing is buffered. */
export interface DownloadResult {
  /** The file's bytes. Compare the bytes read with `contentLength` (or the file's size) to catch truncation. */
  readonly body: Readable;
  /** `Content-Length` of the response, when the service sent one. */
  readonly contentLength?: number;
  /** `Content-Type` of the response, when the service sent one. */
  readonly contentType?: string;
}

/** Bound on template pages followed, against a service that never stops sending `@odata.nextLink`. */
export const MAX_TEMPLATE_PAGES = 10_000;
/** Redirects a download follows at most. */
export const MAX_DOWNLOAD_REDIRECTS = 3;
const SERVICE_MESSAGE_MAX = 300;

// Response schemas: strict on what the client needs, lenient on the rest, unknown keys kept (templates).
const idSchema = z.union([z.string().min(1), z.number()]).transform((value) => String(value));
const stringOr = (fallback: string) =>
  z
    .string()
    .nullish()
    .transform((value) => value ?? fallback);

const workspaceSchema: z.ZodType<Workspace> = z.looseObject({
  id: idSchema,
  displayName: stringOr(''),
});
const workspaceListSchema = z.looseObject({ value: z.array(workspaceSchema) });

const templateFileSchema: z.ZodType<TemplateFile> = z.looseObject({
  id: idSchema,
  filename: z.string(),
  mimeType: stringOr(''),
  size: z
    .number()
    .nullish()
    .transform((value) => value ?? 0),
  createdDateTime: stringOr(''),
  lastModifiedDateTime: stringOr(''),
  usedProperties: z
    .array(
      z.looseObject({
        name: z.string(),
        required: z
          .boolean()
          .nullish()
          .transform((v) => v ?? false),
      }),
    )
    .optional(),
});

// A property of an unknown type passes through: only `name` and `type` are required.
const templatePropertySchema: z.ZodType<TemplateProperty> = z.looseObject({
  type: z.string(),
  name: z.string(),
  label: z.string().optional(),
  description: z
    .string()
    .nullish()
    .transform((value) => value ?? undefined),
  allowedValues: z.array(z.string()).optional(),
  // Typed as text; another JSON type arrives as its JSON text rather than failing the whole template.
  defaultValue: z
    .unknown()
    .transform((value) =>
      value === undefined || value === null
        ? undefined
        : typeof value === 'string'
          ? value
          : JSON.stringify(value),
    )
    .optional(),
  multipleValues: z.boolean().optional(),
  readOnly: z.boolean().optional(),
});

const templateSchema: z.ZodType<Template> = z.looseObject({
  id: idSchema,
  name: z.string(),
  description: z
    .string()
    .nullish()
    .transform((value) => value ?? undefined),
  createdDateTime: stringOr(''),
  files: z
    .array(templateFileSchema)
    .nullish()
    .transform((value) => value ?? []),
  properties: z.array(templatePropertySchema).optional(),
});

const templatePageSchema: z.ZodType<TemplatePage> = z.looseObject({
  value: z.array(templateSchema),
  '@odata.nextLink': z
    .string()
    .nullish()
    .transform((value) => value ?? undefined),
});

const documentFileSchema: z.ZodType<DocumentFile> = z
  .object({
    id: idSchema,
    mimeType: stringOr('application/octet-stream'),
    filename: z.string().min(1),
    size: z.number().nonnegative(),
    templateFileReference: z
      .object({ id: idSchema, name: z.string().optional(), templateId: idSchema.optional() })
      .optional(),
    isTemporary: z.boolean().optional(),
    '@api.downloadUrl': z.string().min(1).optional(),
    '@api.downloadURL': z.string().min(1).optional(),
  })
  .refine((file) => file['@api.downloadUrl'] !== undefined || file['@api.downloadURL'] !== undefined, {
    message: 'a generated file has no @api.downloadUrl',
  })
  .transform(({ '@api.downloadUrl': lower, '@api.downloadURL': upper, ...rest }) => ({
    ...rest,
    downloadUrl: (lower ?? upper) as string,
  }));

const documentSchema: z.ZodType<GeneratedDocument> = z.object({
  id: idSchema,
  name: stringOr(''),
  data: z
    .record(z.string(), z.unknown())
    .nullish()
    .transform((value) => value ?? {}),
  templateReference: z.object({ id: idSchema, name: z.string().optional() }).optional(),
  files: z.array(documentFileSchema).min(1),
});

interface RawResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/** The Document Generation Service client. */
export class DocgenClient {
  private readonly base: string;
  private readonly apiKey: ApiKeyProvider;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  private readonly policy: RetryPolicy;
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
    this.fetchImpl = options.fetch ?? globalThis.fetch;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.policy = { ...DEFAULT_RETRY_POLICY, ...stripUndefined(options.retry ?? {}) };
    this.downloadPolicy = makeDownloadPolicy(
      this.base,
      options.downloadOrigins,
      options.allowInsecureDownloads,
    );
    this.retryEnv = {
      policy: this.policy,
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

  /** One workspace by id. */
  async getWorkspace(id: string): Promise<Workspace> {
    return this.call(
      'getWorkspace',
      'GET',
      this.url(`workspace/${encodeURIComponent(id)}`),
      workspaceSchema,
      {
        what: `workspace ${id}`,
      },
    );
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
   * Generates a document. A multi-file template needs `templateFileId`; without one the call is refused
   * before any create request, naming the files to choose from. Without `template` or `templateFileId` the
   * template is read first to learn its files.
   */
  async createDocument(request: CreateDocumentRequest): Promise<GeneratedDocument> {
    const { templateId, templateFileId } = request;
    if (templateFileId === undefined) {
      const template = request.template ?? (await this.getTemplate(templateId));
      if (template.files.length > 1) {
        const files = template.files.map((file) => ({ id: file.id, filename: file.filename }));
        throw new DocgenTemplateFileRequiredError(
          `template ${templateId} has ${files.length} files; choose one with templateFileId: ${describeFiles(files)}`,
          files,
        );
      }
    } else if (
      request.template !== undefined &&
      !request.template.files.some((f) => f.id === templateFileId)
    ) {
      const files = request.template.files.map((file) => ({ id: file.id, filename: file.filename }));
      throw new DocgenTemplateFileRequiredError(
        `template ${templateId} has no file ${templateFileId}; its files are: ${describeFiles(files)}`,
        files,
      );
    }
    const url = this.url(`templates/${encodeURIComponent(templateId)}/documents`);
    // Written literally: '@' is valid in a query, and the service documents the parameter by this name.
    if (templateFileId !== undefined)
      url.search = `?@api.templateFileId=${encodeURIComponent(templateFileId)}`;
    const body = JSON.stringify({ data: request.data });
    return this.call('createDocument', 'POST', url, documentSchema, {
      what: `template ${templateId}`,
      body,
      expect: [200, 201],
    });
  }

  /**
   * Streams a generated file. Sends no API key (the link carries its own token), follows only links and
   * redirects on allowed origins, and reports an expired or removed link as `DOCGEN_LINK_EXPIRED`.
   */
  async download(file: DocumentFile | string, opts: { signal?: AbortSignal } = {}): Promise<DownloadResult> {
    const link = typeof file === 'string' ? file : file.downloadUrl;
    const start = checkDownloadUrl(link, this.downloadPolicy, `${this.base}/`);
    const secrets = [...this.secrets, ...tokenParts(start)];
    return withRetry('download', () => this.downloadOnce(start, secrets, opts.signal), {
      ...this.retryEnv,
      signal: opts.signal,
    });
  }

  private url(path: string): URL {
    return new URL(`${this.base}/v1.0/${path}`);
  }

  private nextPageUrl(next: string | undefined, seen: Set<string>): URL | undefined {
    if (next === undefined || next.trim() === '') return undefined;
    let url: URL;
    try {
      url = new URL(next, `${this.base}/`);
    } catch {
      throw new DocgenBadResponseError(`listTemplates: @odata.nextLink ${redactUrl(next)} is not a URL`, {
        operation: 'listTemplates',
      });
    }
    // Following a link sends the API key: never to another origin.
    if (url.origin !== this.origin) {
      throw new DocgenBadResponseError(
        `listTemplates: @odata.nextLink ${redactUrl(url)} leaves the service origin ${this.origin}; not followed`,
        { operation: 'listTemplates' },
      );
    }
    if (seen.has(url.href)) {
      throw new DocgenBadResponseError(
        `listTemplates: @odata.nextLink ${redactUrl(url)} repeats a page already read (a loop); stopped`,
        { operation: 'listTemplates' },
      );
    }
    return url;
  }

  /** One API operation: key, request, refresh-once on 401/403, retries, status mapping, validation. */
  private async call<T>(
    operation: string,
    method: 'GET' | 'POST',
    url: URL,
    schema: z.ZodType<T>,
    opts: { what: string; body?: string; expect?: readonly number[] },
  ): Promise<T> {
    const expect = opts.expect ?? [200];
    let refreshed = false;
    let requests = 0;
    const send = async (key: string): Promise<RawResponse> => {
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
          if (expect.includes(response.status)) return this.parse(operation, response, schema);
          throw this.statusError(operation, opts.what, response, opts.body);
        },
        this.retryEnv,
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
  private async exchange(operation: string, url: URL, init: RequestInit): Promise<RawResponse> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    try {
      const response = await this.fetchImpl(url.href, {
        ...init,
        redirect: 'manual',
        signal: controller.signal,
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, text };
    } catch (error) {
      throw this.transportError(operation, url, error, controller.signal.aborted ? 'timeout' : undefined);
    } finally {
      clearTimeout(timer);
    }
  }

  private transportError(
    operation: string,
    url: URL,
    error: unknown,
    reason: 'timeout' | 'abort' | undefined,
    secrets: readonly string[] = [...this.secrets],
  ): DocgenError {
    const details: DocgenErrorDetails = { operation, cause: sanitizeCause(error, secrets) };
    if (reason === 'abort') return new DocgenAbortedError(`${operation}: aborted by the caller`, details);
    if (reason === 'timeout') {
      return new DocgenTimeoutError(
        `${operation}: no complete answer from ${redactUrl(url)} within ${this.timeoutMs} ms`,
        details,
      );
    }
    return new DocgenNetworkError(
      `${operation}: cannot reach ${redactUrl(url)}: ${scrubText(describeTransportError(error), secrets)}`,
      details,
    );
  }

  private parse<T>(operation: string, response: RawResponse, schema: z.ZodType<T>): T {
    let json: unknown;
    try {
      json = JSON.parse(response.text);
    } catch {
      throw new DocgenBadResponseError(
        `${operation}: the service answered HTTP ${response.status} with a body that is not JSON`,
        { operation, status: response.status },
      );
    }
    const result = schema.safeParse(json);
    if (!result.success) {
      // Issue paths and expectations only: never the received values, which may hold tokens.
      const issues = result.error.issues
        .slice(0, 5)
        .map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`)
        .join('; ');
      throw new DocgenBadResponseError(
        `${operation}: the service's answer (HTTP ${response.status}) is not the documented shape: ${scrubText(issues, [...this.secrets])}`,
        { operation, status: response.status },
      );
    }
    return result.data;
  }

  private statusError(operation: string, what: string, response: RawResponse, body?: string): DocgenError {
    const { status } = response;
    const serviceMessage = extractServiceMessage(response.text, [...this.secrets]);
    const said = serviceMessage === undefined ? '' : `: ${serviceMessage}`;
    const details: DocgenErrorDetails = {
      operation,
      status,
      serviceMessage,
      retryAfterMs: parseRetryAfter(response.headers.get('retry-after'), this.retryEnv.now()),
    };
    if (status === 401 || status === 403) {
      return new DocgenAuthError(
        `${operation}: the service refused the API key (HTTP ${status})${this.apiKey.refresh ? ', also after reading the key again' : ''}${said}`,
        details,
      );
    }
    if (status === 404)
      return new DocgenNotFoundError(`${operation}: ${what} not found (HTTP 404)${said}`, details);
    if (status === 413) {
      const bytes = body === undefined ? 0 : Buffer.byteLength(body, 'utf8');
      return new DocgenPayloadTooLargeError(
        `${operation}: the service refused a request body of ${bytes} bytes as too large (HTTP 413)${said}`,
        bytes,
        details,
      );
    }
    if (status === 429)
      return new DocgenRateLimitedError(`${operation}: rate limited (HTTP 429)${said}`, details);
    if (status >= 500) {
      return new DocgenUnavailableError(`${operation}: the service failed (HTTP ${status})${said}`, details);
    }
    if (status >= 300 && status < 400) {
      const location = response.headers.get('location');
      return new DocgenBadResponseError(
        `${operation}: unexpected redirect (HTTP ${status})${location === null ? '' : ` to ${redactUrl(location)}`}; not followed, it would carry the API key`,
        details,
      );
    }
    if (status >= 200 && status < 300) {
      return new DocgenBadResponseError(`${operation}: unexpected HTTP ${status}${said}`, details);
    }
    return new DocgenBadRequestError(
      `${operation}: the service refused the request (HTTP ${status})${said}`,
      details,
    );
  }

  /** One download attempt: follows allowed redirects, then returns the streaming body or throws. */
  private async downloadOnce(start: URL, secrets: string[], signal?: AbortSignal): Promise<DownloadResult> {
    let url = start;
    for (let hop = 0; hop <= MAX_DOWNLOAD_REDIRECTS; hop++) {
      const opened = await this.openDownload(url, secrets, signal);
      const { response } = opened;
      if (response.status >= 300 && response.status < 400 && response.status !== 304) {
        opened.close();
        const location = response.headers.get('location');
        if (location === null || location === '') {
          throw new DocgenBadResponseError(
            `download: HTTP ${response.status} from ${redactUrl(url)} has no Location`,
            {
              operation: 'download',
              status: response.status,
            },
          );
        }
        if (hop === MAX_DOWNLOAD_REDIRECTS) {
          throw new DocgenBadResponseError(
            `download: more than ${MAX_DOWNLOAD_REDIRECTS} redirects from ${redactUrl(start)}; stopped`,
            { operation: 'download', status: response.status },
          );
        }
        url = checkDownloadUrl(location, this.downloadPolicy, url.href);
        secrets.push(...tokenParts(url));
        continue;
      }
      if (response.status >= 200 && response.status < 300) return opened.stream();
      const text = await response.text().catch(() => '');
      opened.close();
      throw downloadStatusError(url, response, text, secrets, this.retryEnv.now());
    }
    // Unreachable: the loop returns or throws on its last hop.
    throw new DocgenBadResponseError('download: too many redirects', { operation: 'download' });
  }

  /** Sends the download request; the timeout covers the headers, then each gap between body chunks. */
  private async openDownload(
    url: URL,
    secrets: readonly string[],
    signal?: AbortSignal,
  ): Promise<{ response: Response; close(): void; stream(): DownloadResult }> {
    const controller = new AbortController();
    let reason: 'timeout' | 'abort' | undefined;
    const onAbort = (): void => {
      reason ??= 'abort';
      controller.abort();
    };
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    const timeout = (): void => {
      reason ??= 'timeout';
      controller.abort();
    };
    let timer: NodeJS.Timeout | undefined = setTimeout(timeout, this.timeoutMs);
    const release = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      signal?.removeEventListener('abort', onAbort);
    };
    let response: Response;
    try {
      // No x-api-key: the link carries its own authorization.
      response = await this.fetchImpl(url.href, {
        method: 'GET',
        headers: { accept: '*/*' },
        redirect: 'manual',
        signal: controller.signal,
      });
    } catch (error) {
      release();
      throw this.transportError('download', url, error, reason, secrets);
    }
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;

    const close = (): void => {
      release();
      response.body?.cancel().catch(() => undefined);
    };
    const stream = (): DownloadResult => {
      const source =
        response.body === null
          ? Readable.from([])
          : Readable.fromWeb(response.body as unknown as WebReadableStream<Uint8Array>);
      const timeoutMs = this.timeoutMs;
      const arm = (): void => {
        if (timer !== undefined) clearTimeout(timer);
        timer = setTimeout(timeout, timeoutMs);
      };
      const guard = new Transform({
        transform(chunk, _encoding, callback) {
          arm();
          callback(null, chunk);
        },
      });
      source.on('error', (error) => {
        guard.destroy(this.transportError('download', url, error, reason, secrets));
      });
      guard.on('close', () => {
        release();
        if (!source.destroyed) source.destroy();
      });
      source.on('end', () => {
        if (timer !== undefined) clearTimeout(timer);
        timer = undefined;
      });
      source.pipe(guard);
      arm();
      const length = Number(response.headers.get('content-length') ?? Number.NaN);
      return {
        body: guard,
        contentLength: Number.isSafeInteger(length) && length >= 0 ? length : undefined,
        contentType: response.headers.get('content-type') ?? undefined,
      };
    };
    return { response, close, stream };
  }
}

function downloadStatusError(
  url: URL,
  response: Response,
  text: string,
  secrets: readonly string[],
  now: number,
): DocgenError {
  const { status } = response;
  const serviceMessage = extractServiceMessage(text, secrets);
  const said = serviceMessage === undefined ? '' : `: ${serviceMessage}`;
  const details: DocgenErrorDetails = {
    operation: 'download',
    status,
    serviceMessage,
    retryAfterMs: parseRetryAfter(response.headers.get('retry-after'), now),
  };
  const where = redactUrl(url);
  if (status === 401 || status === 403 || status === 404 || status === 410) {
    return new DocgenLinkExpiredError(
      `download: the link ${where} has expired or its file was removed (HTTP ${status}); generate the document again${said}`,
      details,
    );
  }
  if (status === 429)
    return new DocgenRateLimitedError(`download: rate limited at ${where} (HTTP 429)${said}`, details);
  if (status >= 500)
    return new DocgenUnavailableError(`download: ${where} failed (HTTP ${status})${said}`, details);
  return new DocgenBadRequestError(`download: ${where} refused the request (HTTP ${status})${said}`, details);
}

/** The service's message from an error body (shape not documented): JSON fields first, else the text. */
export function extractServiceMessage(text: string, secrets: readonly string[] = []): string | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  let message: string | undefined;
  try {
    message = pickMessage(JSON.parse(trimmed));
  } catch {
    message = undefined;
  }
  const chosen = (message ?? trimmed).replace(/\s+/g, ' ').trim();
  const scrubbed = scrubText(chosen, secrets);
  return scrubbed.length > SERVICE_MESSAGE_MAX ? `${scrubbed.slice(0, SERVICE_MESSAGE_MAX - 1)}…` : scrubbed;
}

function pickMessage(json: unknown): string | undefined {
  if (typeof json === 'string') return json;
  if (json === null || typeof json !== 'object') return undefined;
  const record = json as Record<string, unknown>;
  const nested = record.error;
  if (typeof record.message === 'string') return record.message;
  if (nested !== null && typeof nested === 'object') {
    const inner = (nested as Record<string, unknown>).message;
    if (typeof inner === 'string') return inner;
  }
  if (typeof nested === 'string') return nested;
  for (const key of ['title', 'detail', 'error_description']) {
    if (typeof record[key] === 'string') return record[key] as string;
  }
  return undefined;
}

function describeTransportError(error: unknown): string {
  if (!isErrorLike(error)) return String(error);
  const cause = error.cause;
  const code =
    cause !== null && typeof cause === 'object' && typeof (cause as { code?: unknown }).code === 'string'
      ? ` (${(cause as { code: string }).code})`
      : '';
  return `${error.message}${code}`;
}

/** The parts of a link that are secret: its whole query, each longer parameter value, its fragment. */
function tokenParts(url: URL): string[] {
  const parts: string[] = [];
  if (url.search.length > 1) parts.push(url.search.slice(1));
  for (const value of url.searchParams.values()) {
    if (value.length >= 8) parts.push(value, encodeURIComponent(value));
  }
  if (url.hash.length > 1) parts.push(url.hash.slice(1));
  return parts;
}

function describeFiles(files: ReadonlyArray<{ id: string; filename: string }>): string {
  return files.map((file) => `${file.id} (${file.filename})`).join(', ');
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
