import type { OptionRule } from '../types';
import { SignatureError, VerifyConfigError } from './errors';

/** Larger header values are refused before any parsing: no sender signs with more than this. */
export const MAX_HEADER_BYTES = 8 * 1024;

/** Signature lists (Stripe, Standard Webhooks) longer than this are refused, bounding the work per request. */
export const MAX_SIGNATURES = 32;

/** Default timestamp tolerance, as Stripe, Slack and Standard Webhooks document it. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** The `toleranceSeconds` option of a timestamped scheme, with the default its sender documents. */
export const toleranceOption = (defaultSeconds = DEFAULT_TOLERANCE_SECONDS): OptionRule<number> => ({
  describe: 'accepted clock skew, in seconds',
  default: defaultSeconds,
});

/**
 * Reads a header by lower-cased name. `display` is the documented spelling used in messages.
 * Own properties only, so a configured name like `constructor` never reads Object.prototype.
 */
export function readHeader(
  headers: Readonly<Record<string, string>>,
  name: string,
  display: string,
): string | undefined {
  const value = Object.hasOwn(headers, name) ? headers[name] : undefined;
  if (typeof value !== 'string' || value === '') return undefined;
  if (value.length > MAX_HEADER_BYTES) {
    throw new SignatureError('SIGNATURE_MALFORMED', `${display} header is larger than 8 KB`);
  }
  return value;
}

/** Like readHeader, but a missing header refuses the delivery. */
export function requireHeader(
  headers: Readonly<Record<string, string>>,
  name: string,
  display: string,
): string {
  const value = readHeader(headers, name, display);
  if (value === undefined) throw new SignatureError('SIGNATURE_MISSING', `missing ${display} header`);
  return value;
}

// Twelve digits reach the year 33658: anything longer is not a real Unix time and would lose precision.
const UNIX_SECONDS = /^[0-9]{1,12}$/;

/** Parses a Unix time in whole seconds; refuses signs, decimals, spaces and absurd lengths. */
export function parseUnixSeconds(text: string, display: string): number {
  if (!UNIX_SECONDS.test(text)) {
    throw new SignatureError('SIGNATURE_MALFORMED', `${display} is not a Unix timestamp`);
  }
  return Number(text);
}

/** The configured tolerance, validated; a bad value is a configuration error, not the sender's fault. */
export function toleranceOf(
  toleranceSeconds: number | undefined,
  defaultSeconds = DEFAULT_TOLERANCE_SECONDS,
): number {
  const tolerance = toleranceSeconds ?? defaultSeconds;
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new VerifyConfigError('verify.toleranceSeconds must be a non-negative number');
  }
  return tolerance;
}

/** Refuses a signed timestamp further than the tolerance from now, in the past (replay) or the future. */
export function assertWithinTolerance(timestampSeconds: number, now: Date, toleranceSeconds: number): void {
  const nowSeconds = Math.floor(now.getTime() / 1000);
  if (!Number.isFinite(nowSeconds)) {
    // An invalid Date would make every comparison false and so accept any timestamp.
    throw new VerifyConfigError('verification needs a valid current time');
  }
  if (Math.abs(nowSeconds - timestampSeconds) > toleranceSeconds) {
    throw new SignatureError('TIMESTAMP_STALE', `timestamp outside the ${toleranceSeconds} s tolerance`);
  }
}

/** The secrets a signing scheme needs; none (or an empty one) is a configuration error. */
export function requireSecrets(secrets: readonly string[], scheme: string): readonly string[] {
  if (secrets.length === 0) throw new VerifyConfigError(`verify scheme ${scheme} needs at least one secret`);
  // An empty HMAC key is a misconfiguration (an unresolved secret), never something to sign with.
  if (secrets.some((secret) => typeof secret !== 'string' || secret.length === 0)) {
    throw new VerifyConfigError(`verify scheme ${scheme} has an empty secret`);
  }
  return secrets;
}
