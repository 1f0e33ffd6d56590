/**
 * Checks a create-document request's `data` against the template and the chosen file, and computes the
 * system entries the service adds. Values are JSON typed as the interface page says; `object` renders as its
 * JSON text, `multipleValues` joined by ", ", and a type the emulator does not know passes through.
 */
import type { TemplateProperty, Workspace } from '../../functions/docgen/types';
import { EmulatorHttpError } from './errors';
import type { StoredTemplate, StoredTemplateFile } from './template-store';

/** The checked request: the client's values as sent, and the text each tag is replaced with. */
export interface CheckedData {
  readonly clientData: Record<string, unknown>;
  readonly renderValues: Record<string, string>;
}

const badRequest = (message: string): EmulatorHttpError => new EmulatorHttpError(400, 'BadRequest', message);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isDate = (value: string): boolean => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (match === null) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
};

/** The text of one value for `property`, or a 400 naming the property when the value does not fit its type. */
function renderValue(property: TemplateProperty, value: unknown): string {
  const fail = (expected: string): never => {
    throw badRequest(
      `Property "${property.name}" (${property.type}) expects ${expected}, got ${JSON.stringify(value)}`,
    );
  };
  switch (property.type) {
    case 'text':
    case 'string':
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
        return String(value);
      return fail('a string');
    case 'date':
      if (typeof value === 'string' && isDate(value)) return value;
      return fail('a date as YYYY-MM-DD');
    case 'number':
      if (typeof value === 'number' && Number.isFinite(value)) return String(value);
      return fail('a JSON number');
    case 'integer':
      if (typeof value === 'number' && Number.isInteger(value)) return String(value);
      return fail('a JSON integer');
    case 'boolean':
      if (typeof value === 'boolean') return String(value);
      return fail('a JSON boolean');
    case 'select': {
      const allowed = property.allowedValues ?? [];
      if (typeof value === 'string' && allowed.includes(value)) return value;
      return fail(`one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`);
    }
    case 'object':
      if (isPlainObject(value)) return JSON.stringify(value);
      return fail('a JSON object');
    default:
      // Unknown types pass through, as the client must do with them.
      return typeof value === 'string' ? value : JSON.stringify(value);
  }
}

/** The text of a value, or of each value of a `multipleValues` property (a JSON array), joined. */
function renderPropertyValue(property: TemplateProperty, value: unknown): string {
  if (property.multipleValues !== true) return renderValue(property, value);
  if (!Array.isArray(value)) {
    throw badRequest(
      `Property "${property.name}" (${property.type}, multiple values) expects a JSON array, got ${JSON.stringify(value)}`,
    );
  }
  return value.map((item) => renderValue(property, item)).join(', ');
}

const missing = (value: unknown): boolean => value === undefined || value === null || value === '';

/**
 * Checks `body.data` for `file` of `template`: an object, typed values, select values allowed, and (when
 * `enforceRequired`) a value for each property the file requires. Missing selects take their default.
 */
export function checkDocumentData(
  template: StoredTemplate,
  file: StoredTemplateFile,
  body: unknown,
  enforceRequired: boolean,
): CheckedData {
  if (!isPlainObject(body)) throw badRequest('The request body must be a JSON object with a "data" member');
  const data = body['data'];
  if (!isPlainObject(data)) throw badRequest('The member "data" is required and must be a JSON object');
  const renderValues: Record<string, string> = {};
  for (const property of template.properties) {
    const value = data[property.name];
    if (!missing(value)) renderValues[property.name] = renderPropertyValue(property, value);
    else if (property.defaultValue !== undefined) renderValues[property.name] = property.defaultValue;
  }
  if (enforceRequired) {
    const absent = file.resource.usedProperties
      .filter((used) => used.required && renderValues[used.name] === undefined)
      .map((used) => `"${used.name}"`);
    if (absent.length > 0) {
      throw badRequest(
        `Missing value for required ${absent.length === 1 ? 'property' : 'properties'} ${absent.join(', ')} of file ${file.resource.id} (${file.resource.filename})`,
      );
    }
  }
  return { clientData: { ...data }, renderValues };
}

/** The entries the service adds to a document's `data`. Title, Description, Keywords and Subject keep a client's value. */
export function systemEntries(input: {
  automaticNumber: number;
  now: Date;
  template: StoredTemplate;
  workspace: Workspace;
  clientData: Readonly<Record<string, unknown>>;
}): Record<string, unknown> {
  const timestamp = input.now.toISOString();
  const clientText = (key: string): string | null => {
    const value = input.clientData[key];
    return typeof value === 'string' ? value : null;
  };
  return {
    AutomaticNumber: input.automaticNumber,
    CreatedOn: timestamp,
    DocumentDate: timestamp,
    Title: clientText('Title') ?? `${input.template.name} ${input.automaticNumber}`,
    Template: input.template.id,
    Organization: input.workspace.displayName,
    Description: clientText('Description'),
    Keywords: clientText('Keywords'),
    Subject: clientText('Subject'),
  };
}
