/**
 * The Document Generation Service's resources, derived from the wire schemas (`wire.ts`) so each field is
 * written once, and the port the core uses to reach the service; optional where the interface says so.
 */
import type { Readable } from 'node:stream';
import type * as z from 'zod/mini';
import type {
  documentFileSchema,
  documentSchema,
  templateFileSchema,
  templatePageSchema,
  templatePropertySchema,
  templateSchema,
  usedPropertySchema,
  workspaceSchema,
} from './wire';

/** The workspace an API key belongs to. */
export type Workspace = z.output<typeof workspaceSchema>;
/** A property a template file uses, and whether a value is required for that file. */
export type UsedProperty = z.output<typeof usedPropertySchema>;
/** One file of a template. */
export type TemplateFile = z.output<typeof templateFileSchema>;
/** A template property (merge field); a property of an unknown type passes through untouched. */
export type TemplateProperty = z.output<typeof templatePropertySchema>;
/** A template as listed (no `properties`) or read singly (with `properties`). */
export type Template = z.output<typeof templateSchema>;
/** A page of the template list. */
export type TemplatePage = z.output<typeof templatePageSchema>;
/** A generated file, normalised: the download link is read from either spelling of its field. */
export type DocumentFile = z.output<typeof documentFileSchema>;
/** A generated document, normalised. */
export type GeneratedDocument = z.output<typeof documentSchema>;

/** The `data` object sent to create a document: property name to JSON value. */
export type DocumentData = Record<string, unknown>;

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
  /** Time this call may spend retrying, waits included, when shorter than the client's budget. */
  readonly retryBudgetMs?: number;
}

/** A download in progress: the body streams, nothing is buffered. */
export interface DownloadResult {
  /** The file's bytes. Compare the bytes read with `contentLength` (or the file's size) to catch truncation. */
  readonly body: Readable;
  /** `Content-Length` of the response, when the service sent one. */
  readonly contentLength?: number;
  /**
   * Whether the transport marks where the body ends (Content-Length or chunked), so a cut fails the body;
   * without either the body ends when the connection closes, and only the service's `size` tells a cut.
   */
  readonly framed: boolean;
  /** `Content-Type` of the response, when the service sent one. */
  readonly contentType?: string;
}

/** Options of one download. */
export interface DownloadOptions {
  /** Aborts the download (before or while the body streams). */
  readonly signal?: AbortSignal;
  /** Time this download may spend retrying its request, when shorter than the client's budget. */
  readonly retryBudgetMs?: number;
}
