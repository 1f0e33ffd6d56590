/**
 * The Document Generation Service's resources, as its interface page describes them.
 * Shared by the client, the emulator and the mapper. Fields the page marks optional are optional here.
 */

/** The workspace an API key belongs to. */
export interface Workspace {
  id: string;
  displayName: string;
}

/** A property a template file uses, and whether a value is required for that file. */
export interface UsedProperty {
  name: string;
  required: boolean;
}

/** One file of a template. */
export interface TemplateFile {
  id: string;
  mimeType: string;
  filename: string;
  size: number;
  createdDateTime: string;
  lastModifiedDateTime: string;
  usedProperties?: UsedProperty[];
}

/**
 * A template property (merge field). Observed types are `text`, `date` and `select`; the public docs also
 * name `string`, `boolean`, `integer`, `number`, `object`. Any other type must pass through untouched.
 */
export interface TemplateProperty {
  type: string;
  name: string;
  label?: string;
  description?: string;
  allowedValues?: string[];
  defaultValue?: string;
  multipleValues?: boolean;
  readOnly?: boolean;
}

/** A template as listed (no `properties`) or read singly (with `properties`). */
export interface Template {
  id: string;
  name: string;
  description?: string;
  createdDateTime: string;
  files: TemplateFile[];
  properties?: TemplateProperty[];
}

/** A page of the template list. */
export interface TemplatePage {
  value: Template[];
  '@odata.nextLink'?: string;
}

/** A generated file, normalised: the download link is read from either spelling of its field. */
export interface DocumentFile {
  id: string;
  mimeType: string;
  filename: string;
  size: number;
  templateFileReference?: { id: string; name?: string; templateId?: string };
  isTemporary?: boolean;
  downloadUrl: string;
}

/** A generated document, normalised. */
export interface GeneratedDocument {
  id: string;
  name: string;
  data: Record<string, unknown>;
  templateReference?: { id: string; name?: string };
  files: DocumentFile[];
}

/** The `data` object sent to create a document: property name to JSON value. */
export type DocumentData = Record<string, unknown>;
