/**
 * The port in front of the Document Generation Service, as the worker uses it. `DocgenClient`
 * (functions/docgen/) implements it over HTTP; unit tests use an in-memory one.
 */
import type { Readable } from 'node:stream';
import type { CreateDocumentRequest, GeneratedDocument } from '../docgen/types';
import type { TemplateSource } from '../mapping/mapper';

/** A download in progress. */
export interface DocumentDownload {
  readonly body: Readable;
  readonly contentLength?: number;
  /** The transport marks where the body ends (Content-Length or chunked): a cut fails the body. */
  readonly framed: boolean;
  readonly contentType?: string;
}

/** Generates documents and hands out their files. */
export interface DocumentService {
  /** Asks the service to generate a document; resolves to its id and files with temporary links. */
  createDocument(request: CreateDocumentRequest): Promise<GeneratedDocument>;
  /**
   * Opens a temporary download link (throws DocgenLinkExpiredError once it has expired); `retryBudgetMs`
   * shortens the time its request may spend retrying.
   */
  download(url: string, options?: { readonly retryBudgetMs?: number }): Promise<DocumentDownload>;
}

export type { TemplateSource };
