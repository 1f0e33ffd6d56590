/**
 * Coercion of mapped values to what a template property expects (docgen-service-interface.md: text as
 * string, date as `YYYY-MM-DD`, numbers as JSON numbers, select as one of the allowed values). Senders
 * spell the same value many ways (epoch seconds, "12.50", "true"); templates take one.
 */
import type { TemplateProperty } from '../docgen/types';
import type { JsonValue } from './evaluate';

/** The result of coercing one value: a value to send, nothing to send, or why the value is refused. */
export type CoercionResult =
  | { readonly kind: 'value'; readonly value: JsonValue }
  | { readonly kind: 'absent' }
  | { readonly kind: 'error'; readonly message: string; readonly index?: number };

/** Epoch values below this are seconds, above it milliseconds (1e11 s is year 5138; 1e11 ms is 1973). */
export const EPOCH_MILLIS_THRESHOLD = 1e11;

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?(?:[Zz]|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * Coerces one mapped value to the property's type. `null` (and an empty string for non-text types) means
 * "no value"; `multipleValues` properties take arrays (a single value becomes a one-element array).
 */
export function coerceValue(property: TemplateProperty, value: JsonValue): CoercionResult {
  if (value === null) return { kind: 'absent' };
  if (property.multipleValues === true) {
    // JSONata returns a single match unwrapped, so a one-item list arrives as a scalar.
    const items = Array.isArray(value) ? value : [value];
    const out: JsonValue[] = [];
    for (const [index, item] of items.entries()) {
      const result = coerceSingle(property, item);
      if (result.kind === 'error') return { ...result, index };
      if (result.kind === 'value') out.push(result.value);
    }
    return { kind: 'value', value: out };
  }
  return coerceSingle(property, value);
}

function coerceSingle(property: TemplateProperty, value: JsonValue): CoercionResult {
  if (value === null) return { kind: 'absent' };
  switch (property.type) {
    case 'text':
    case 'string':
      return toText(value);
    case 'date':
      return toDate(value);
    case 'number':
      return toNumber(value, false);
    case 'integer':
      return toNumber(value, true);
    case 'boolean':
      return toBoolean(value);
    case 'select':
      return toSelect(property, value);
    case 'object':
      return typeof value === 'object' && !Array.isArray(value)
        ? { kind: 'value', value }
        : error(`expected an object, got ${show(value)}`);
    default:
      // The service may add types; the client must not break on them, so the value goes as mapped.
      return { kind: 'value', value };
  }
}

const error = (message: string): CoercionResult => ({ kind: 'error', message });

/** Short rendering of a value for messages (payload values are cut, they may be long). */
function show(value: JsonValue): string {
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (typeof value === 'object' && value !== null) return 'an object';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function toText(value: JsonValue): CoercionResult {
  if (typeof value === 'string') return { kind: 'value', value };
  if (typeof value === 'number' || typeof value === 'boolean') return { kind: 'value', value: String(value) };
  return Array.isArray(value)
    ? error(`expected text, got ${show(value)} (use $join(..., ", ") to make one string)`)
    : error(`expected text, got ${show(value)} (pick a field, or use $string() for JSON text)`);
}

function toNumber(value: JsonValue, integer: boolean): CoercionResult {
  const what = integer ? 'an integer' : 'a number';
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string') {
    const text = value.trim();
    if (text === '') return { kind: 'absent' };
    if (!NUMERIC.test(text)) return error(`expected ${what}, got ${show(value)}`);
    n = Number(text);
  } else return error(`expected ${what}, got ${show(value)}`);
  if (!Number.isFinite(n)) return error(`expected ${what}, got ${show(value)} (not finite)`);
  if (integer && !Number.isInteger(n))
    return error(`expected an integer, got ${n} (use $round() or $floor())`);
  return { kind: 'value', value: n };
}

function toBoolean(value: JsonValue): CoercionResult {
  if (typeof value === 'boolean') return { kind: 'value', value };
  if (value === 1 || value === 0) return { kind: 'value', value: value === 1 };
  if (typeof value === 'string') {
    const text = value.trim().toLowerCase();
    if (text === '') return { kind: 'absent' };
    if (text === 'true' || text === '1') return { kind: 'value', value: true };
    if (text === 'false' || text === '0') return { kind: 'value', value: false };
  }
  return error(`expected a boolean (true/false, "true"/"false", 1/0), got ${show(value)}`);
}

function toSelect(property: TemplateProperty, value: JsonValue): CoercionResult {
  if (typeof value === 'object') return error(`expected one of the allowed values, got ${show(value)}`);
  const text = String(value);
  if (text === '') return { kind: 'absent' };
  const allowed = property.allowedValues;
  if (allowed === undefined || allowed.length === 0 || allowed.includes(text))
    return { kind: 'value', value: text };
  // The template's default stands in for a value it does not offer (interface: defaultValue is allowed).
  if (property.defaultValue !== undefined && allowed.includes(property.defaultValue)) {
    return { kind: 'value', value: property.defaultValue };
  }
  return error(
    `${show(text)} is not one of the allowed values ${allowed.map((v) => JSON.stringify(v)).join(', ')}`,
  );
}

function toDate(value: JsonValue): CoercionResult {
  if (typeof value === 'number') return fromEpoch(value, show(value));
  if (typeof value !== 'string') return error(`expected a date, got ${show(value)}`);
  const text = value.trim();
  if (text === '') return { kind: 'absent' };
  if (NUMERIC.test(text)) return fromEpoch(Number(text), show(value));
  const dateOnly = DATE_ONLY.exec(text);
  const dateTime = dateOnly ?? DATE_TIME.exec(text);
  if (dateTime !== null) {
    const [, y, m, d, hh, mm, ss] = dateTime;
    const validTime =
      hh === undefined || (Number(hh) <= 23 && Number(mm) <= 59 && (ss === undefined || Number(ss) <= 60));
    if (validTime && isCalendarDate(Number(y), Number(m), Number(d))) {
      // The date as written, in the sender's own offset: "2024-05-31T23:30:00-05:00" is the 31st to the sender.
      return { kind: 'value', value: `${y}-${m}-${d}` };
    }
    return error(`${show(value)} is not a valid date`);
  }
  return error(
    `cannot read ${show(value)} as a date (expected YYYY-MM-DD, an ISO 8601 timestamp, or epoch seconds/milliseconds; for other formats use $toMillis(value, picture))`,
  );
}

function fromEpoch(n: number, shown: string): CoercionResult {
  if (!Number.isFinite(n)) return error(`expected a date, got ${shown}`);
  const millis = Math.abs(n) < EPOCH_MILLIS_THRESHOLD ? n * 1000 : n;
  const date = new Date(millis);
  if (Number.isNaN(date.getTime())) return error(`${shown} is outside the range of dates`);
  // Epoch values carry no offset: the UTC calendar date is the only unambiguous one.
  const iso = date.toISOString();
  return iso.startsWith('+') || iso.startsWith('-')
    ? error(`${shown} is outside the range of dates`)
    : { kind: 'value', value: iso.slice(0, 10) };
}

function isCalendarDate(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
