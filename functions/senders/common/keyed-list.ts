import { SignatureError } from './errors';
import { MAX_SIGNATURES } from './headers';

/**
 * Parses a `key=value<sep>key=value...` signature header (Calendly's `t=..,v1=..`, Paddle's `ts=..;h1=..`)
 * into the values of each key, in order; items without `=` are skipped. More than MAX_SIGNATURES items
 * refuse the delivery, bounding the work per request.
 */
export function parseKeyedList(header: string, separator: string, display: string): Map<string, string[]> {
  const items = header.split(separator);
  if (items.length > MAX_SIGNATURES) {
    throw new SignatureError('SIGNATURE_MALFORMED', `${display} header has too many entries`);
  }
  const values = new Map<string, string[]>();
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq < 0) continue;
    const key = item.slice(0, eq).trim();
    values.set(key, [...(values.get(key) ?? []), item.slice(eq + 1).trim()]);
  }
  return values;
}

/** The one value of a key; none, or two (a repeated header joined by a proxy), refuses the delivery. */
export function singleValue(values: Map<string, string[]>, key: string, display: string): string {
  const found = values.get(key) ?? [];
  if (found.length !== 1 || found[0] === undefined) {
    throw new SignatureError(
      'SIGNATURE_MALFORMED',
      `${display} header has ${found.length === 0 ? 'no' : 'more than one'} ${key}`,
    );
  }
  return found[0];
}
