/**
 * ISO 8601 times as users type them (`since` filters of the jobs API and `docrelay jobs list`): a date, or a
 * date and time (`T` or a space), with an optional offset. One reading for the API and the CLI.
 */

/** An ISO 8601 date, or date and time, with an optional offset. */
const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/** What reading a time gave: its epoch ms, or why it is not one. */
export type IsoTimeReading =
  | { readonly ok: true; readonly ms: number }
  | { readonly ok: false; readonly reason: 'not-iso' }
  | { readonly ok: false; readonly reason: 'no-such-date'; readonly daysInMonth: number };

/**
 * Reads an ISO 8601 time. A date the calendar does not have (February 30) is refused: `Date.parse` would roll
 * it over into March, and a filter would then quietly answer for another day.
 */
export function readIsoTime(text: string): IsoTimeReading {
  const trimmed = text.trim();
  const iso = ISO_TIME.exec(trimmed);
  const ms = Date.parse(trimmed);
  if (iso === null || Number.isNaN(ms)) return { ok: false, reason: 'not-iso' };
  const [year, month, day] = [iso[1], iso[2], iso[3]].map(Number) as [number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) {
    return { ok: false, reason: 'no-such-date', daysInMonth };
  }
  return { ok: true, ms };
}
