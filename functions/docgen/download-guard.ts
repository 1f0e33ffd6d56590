/**
 * Which download links the client follows. A link comes from a service response, so a compromised or
 * misconfigured answer could point anywhere (SSRF): only the service's own origin and the configured
 * download origins are followed, and only over https unless insecure downloads are allowed (local runs).
 */
import { DocgenDownloadOriginRefusedError } from './errors';
import { redactUrl } from './redact';

/** The origins downloads may come from, and whether plain http is acceptable. */
export interface DownloadPolicy {
  /** Allowed origins, normalised (`https://host[:port]`). */
  readonly origins: ReadonlySet<string>;
  /** Whether `http:` links are followed. */
  readonly allowInsecure: boolean;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** True when the URL's host is a loopback name or address. */
export function isLoopbackUrl(url: string): boolean {
  try {
    return LOOPBACK_HOSTS.has(new URL(url).hostname);
  } catch {
    return false;
  }
}

/** The download policy for a service at `baseUrl` with extra allowed origins. */
export function makeDownloadPolicy(
  baseUrl: string,
  downloadOrigins: readonly string[] = [],
  allowInsecure?: boolean,
): DownloadPolicy {
  const origins = new Set<string>([new URL(baseUrl).origin]);
  for (const origin of downloadOrigins) {
    let parsed: URL;
    try {
      parsed = new URL(origin);
    } catch {
      throw new TypeError(`download origin "${origin}" is not a URL (write it as https://host[:port])`);
    }
    origins.add(parsed.origin);
  }
  const insecure = allowInsecure ?? (new URL(baseUrl).protocol === 'http:' && isLoopbackUrl(baseUrl));
  return { origins, allowInsecure: insecure };
}

/** Parses a download link (relative links resolve against `base`) and refuses one the policy does not allow. */
export function checkDownloadUrl(link: string, policy: DownloadPolicy, base: string): URL {
  let url: URL;
  try {
    url = new URL(link, base);
  } catch {
    throw new DocgenDownloadOriginRefusedError(`download link ${redactUrl(link)} is not a valid URL`, {
      operation: 'download',
    });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new DocgenDownloadOriginRefusedError(
      `download link ${redactUrl(url)} uses ${url.protocol}, only https is followed`,
      { operation: 'download' },
    );
  }
  if (url.protocol === 'http:' && !policy.allowInsecure) {
    throw new DocgenDownloadOriginRefusedError(
      `download link ${redactUrl(url)} is not https; insecure downloads are allowed only against a local service`,
      { operation: 'download' },
    );
  }
  if (url.username !== '' || url.password !== '' || !policy.origins.has(url.origin)) {
    throw new DocgenDownloadOriginRefusedError(
      `download link ${redactUrl(url)} is outside the allowed origins (${[...policy.origins].join(', ')}); ` +
        'add its origin to downloadOrigins if the service really serves files from there',
      { operation: 'download' },
    );
  }
  return url;
}
