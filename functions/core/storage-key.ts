/**
 * Renders `storage.keyPattern` into an S3 object key (placeholders: docs/configuration.md). Values are made
 * safe for one key segment, so a sender cannot climb out of the configured prefix with a crafted filename.
 */

/** The values a key pattern may use. */
export interface KeyValues {
  integration: string;
  rule: string;
  jobId: string;
  deliveryId: string;
  documentId: string;
  templateId: string;
  templateFileId?: string;
  fileId: string;
  filename: string;
  /** The time the date placeholders come from (the delivery's receipt, UTC). */
  at: Date;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** The longest segment a value makes, in code points. */
export const MAX_SEGMENT_CODE_POINTS = 200;

/**
 * Makes a value safe as one key segment: no control or format characters (bidi overrides, zero-width ones,
 * which would make a key read other than it is), no lone surrogates (the SDK cannot encode them), no slashes,
 * cut by code point (never inside a character).
 */
export function safeSegment(value: string): string {
  const cleaned = value
    .replace(/[\p{Cc}\p{Cf}\p{Cs}]/gu, '')
    .replace(/[/\\]/g, '_')
    .trim();
  const cut = Array.from(cleaned).slice(0, MAX_SEGMENT_CODE_POINTS).join('');
  if (cut === '' || cut === '.' || cut === '..') return '_';
  return cut;
}

/** Renders a key pattern with the given values; unknown placeholders are left as written. */
export function renderKey(pattern: string, values: KeyValues): string {
  const at = values.at;
  const table: Record<string, string> = {
    integration: values.integration,
    rule: values.rule,
    jobId: values.jobId,
    deliveryId: values.deliveryId,
    documentId: values.documentId,
    templateId: values.templateId,
    templateFileId: values.templateFileId ?? '',
    fileId: values.fileId,
    filename: values.filename,
    yyyy: pad(at.getUTCFullYear(), 4),
    MM: pad(at.getUTCMonth() + 1),
    dd: pad(at.getUTCDate()),
    HH: pad(at.getUTCHours()),
    mm: pad(at.getUTCMinutes()),
  };
  return pattern.replace(/\{([A-Za-z]+)\}/g, (whole, name: string) =>
    Object.hasOwn(table, name) ? safeSegment(table[name] as string) : whole,
  );
}

/** Placeholders whose values a second document of the same job may change. */
const DOCUMENT_PLACEHOLDERS = /\{(documentId|fileId|filename|templateId|templateFileId)\}/;

/**
 * The key prefix under which every file of the job lands, whatever document it gets: the pattern up to its
 * first document placeholder, rendered, when that part names the job (`{jobId}`); undefined otherwise.
 */
export function jobKeyPrefix(
  pattern: string,
  values: Pick<KeyValues, 'integration' | 'rule' | 'jobId' | 'deliveryId' | 'at'>,
): string | undefined {
  const match = DOCUMENT_PLACEHOLDERS.exec(pattern);
  const head = match === null ? pattern : pattern.slice(0, match.index);
  if (!head.includes('{jobId}')) return undefined;
  return renderKey(head, { ...values, documentId: '', templateId: '', fileId: '', filename: '' });
}
