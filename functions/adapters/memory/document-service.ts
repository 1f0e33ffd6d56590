/**
 * The Document Generation Service in memory, for unit tests of the core: templates, generated documents
 * whose files are bytes behind links that can expire, and faults injected per call (an error to throw, a
 * truncated download).
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { DocgenLinkExpiredError } from '../../docgen/errors';
import type { CreateDocumentRequest, GeneratedDocument, Template } from '../../docgen/types';
import type { DocumentDownload, DocumentService, TemplateSource } from '../../ports/document-service';

interface Link {
  readonly bytes: Buffer;
  readonly mimeType: string;
  expired: boolean;
  /** When the link dies by its lifetime (epoch ms by the service's clock), when it has one. */
  readonly expiresAt?: number;
}

/** A fake service over the given templates; each file's bytes are made from the request. */
export class InMemoryDocumentService implements DocumentService, TemplateSource {
  /** Every create request, in order. */
  readonly created: CreateDocumentRequest[] = [];
  /** Every download, by link. */
  readonly downloads: string[] = [];
  /** The retry budget each download was given (undefined: none). */
  readonly downloadBudgets: Array<number | undefined> = [];
  private readonly links = new Map<string, Link>();
  private readonly createFaults: unknown[] = [];
  private readonly downloadFaults: Array<unknown | 'truncate' | 'expire'> = [];
  private framing: 'length' | 'chunked' | 'close' = 'length';
  private announce: (bytes: number) => number | undefined = (bytes) => bytes;
  private lifetime?: { readonly ms: number; readonly now: () => number };

  constructor(private readonly templates: readonly Template[]) {}

  /** Makes the next creates throw these errors, one each. */
  failCreate(...errors: unknown[]): void {
    this.createFaults.push(...errors);
  }

  /** Makes the next downloads fail: an error to throw, `truncate` (fewer bytes than announced) or `expire`. */
  failDownload(...faults: Array<unknown | 'truncate' | 'expire'>): void {
    this.downloadFaults.push(...faults);
  }

  /**
   * How downloads frame their bodies from now on: with a Content-Length (the default), chunked (framed, no
   * length) or ending with the connection (neither).
   */
  frameDownloads(framing: 'length' | 'chunked' | 'close'): void {
    this.framing = framing;
  }

  /** The `size` the create answers give a file of so many bytes from now on (undefined: none). */
  announceSizes(announce: (bytes: number) => number | undefined): void {
    this.announce = announce;
  }

  /** Links made from now on die `ms` after they were made, by `now`. */
  linksLive(ms: number, now: () => number): void {
    this.lifetime = { ms, now };
  }

  /** Expires every link handed out so far. */
  expireLinks(): void {
    for (const link of this.links.values()) link.expired = true;
  }

  async getTemplate(id: string): Promise<Template> {
    const template = this.templates.find((t) => t.id === id);
    if (template === undefined) throw new Error(`no template ${id}`);
    return template;
  }

  async createDocument(request: CreateDocumentRequest): Promise<GeneratedDocument> {
    if (this.createFaults.length > 0) throw this.createFaults.shift();
    this.created.push(request);
    const template = await this.getTemplate(request.templateId);
    const files = template.files.filter(
      (file) => request.templateFileId === undefined || file.id === request.templateFileId,
    );
    const id = randomUUID();
    return {
      id,
      name: `${template.name} ${id}`,
      data: request.data,
      files: files.map((file) => {
        const bytes = Buffer.from(`${file.filename}:${JSON.stringify(request.data)}`);
        const url = `memory://docgen/${id}/${file.id}?token=${randomUUID()}`;
        const expiresAt = this.lifetime === undefined ? undefined : this.lifetime.now() + this.lifetime.ms;
        this.links.set(url, {
          bytes,
          mimeType: file.mimeType,
          expired: false,
          ...(expiresAt === undefined ? {} : { expiresAt }),
        });
        const size = this.announce(bytes.length);
        return {
          id: `${id}-${file.id}`,
          mimeType: file.mimeType,
          filename: file.filename,
          ...(size === undefined ? {} : { size }),
          downloadUrl: url,
        };
      }),
    };
  }

  async download(url: string, options: { readonly retryBudgetMs?: number } = {}): Promise<DocumentDownload> {
    this.downloads.push(url);
    this.downloadBudgets.push(options.retryBudgetMs);
    const link = this.links.get(url);
    const fault = this.downloadFaults.shift();
    if (fault === 'expire' && link !== undefined) link.expired = true;
    const dead =
      link?.expiresAt !== undefined && this.lifetime !== undefined && this.lifetime.now() >= link.expiresAt;
    if (link === undefined || link.expired || dead)
      throw new DocgenLinkExpiredError('the download link has expired');
    const framing = {
      ...(this.framing === 'length' ? { contentLength: link.bytes.length } : {}),
      framed: this.framing !== 'close',
      contentType: link.mimeType,
    };
    if (fault === 'truncate') {
      return { body: Readable.from([link.bytes.subarray(0, Math.floor(link.bytes.length / 2))]), ...framing };
    }
    if (fault !== undefined && fault !== 'expire') throw fault;
    return { body: Readable.from([link.bytes]), ...framing };
  }
}
