/**
 * Keeps secrets out of messages: a download link carries a temporary token in its query string, and the API
 * key travels in a header, so neither may reach an error message, a log line or an error's `cause`.
 */

const REDACTED = '<redacted>';

/** A URL without its query string, fragment or credentials, safe to print (`https://h/p?<redacted>`). */
export function redactUrl(url: string | URL): string {
  const text = String(url);
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    // Not an absolute URL: keep what comes before any query or fragment, which is where a token would be.
    const cut = text.search(/[?#]/);
    return cut === -1 ? text : `${text.slice(0, cut)}?${REDACTED}`;
  }
  const hidden = parsed.search !== '' || parsed.hash !== '' ? `?${REDACTED}` : '';
  return `${parsed.origin}${parsed.pathname}${hidden}`;
}

// Any URL-looking run in free text whose query string or fragment must go.
const URL_WITH_QUERY = /\b[a-z][a-z0-9+.-]*:\/\/[^\s?#"'<>]*[?#][^\s"'<>]*/gi;

/** Free text with every URL's query string redacted and every given secret replaced. */
export function scrubText(text: string, secrets: readonly string[] = []): string {
  let out = text.replace(URL_WITH_QUERY, (match) => redactUrl(match));
  for (const secret of secrets) {
    // Very short values would redact ordinary words; an API key or token is never that short.
    if (secret.length >= 4) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** True for an Error from any realm (fetch errors in Jest come from another one, where instanceof fails). */
export function isErrorLike(value: unknown): value is Error {
  return (
    value instanceof Error ||
    (typeof value === 'object' &&
      value !== null &&
      typeof (value as { message?: unknown }).message === 'string')
  );
}

/**
 * A copy of an error (as a `cause`) with scrubbed message and stack and its `code` kept, following nested
 * causes a few levels. Errors from fetch can quote the URL they were given, and that URL can hold a token.
 */
export function sanitizeCause(error: unknown, secrets: readonly string[] = [], depth = 0): unknown {
  if (error === undefined || error === null) return undefined;
  if (!isErrorLike(error)) return scrubText(String(error), secrets);
  const nested =
    depth < 3 && error.cause !== undefined ? sanitizeCause(error.cause, secrets, depth + 1) : undefined;
  const copy = new Error(
    scrubText(error.message, secrets),
    nested === undefined ? undefined : { cause: nested },
  );
  copy.name = typeof error.name === 'string' ? error.name : 'Error';
  copy.stack = typeof error.stack === 'string' ? scrubText(error.stack, secrets) : undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') {
    Object.defineProperty(copy, 'code', { value: code, enumerable: true });
  }
  return copy;
}
