import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Constant-time equality of two byte strings. Different lengths answer false at once: only the length leaks,
 * and every digest compared here has a fixed, public length anyway.
 */
export const bytesEqual = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === b.length && timingSafeEqual(a, b);

/**
 * Constant-time equality of two strings of any length: comparing SHA-256 digests hides even the length,
 * which matters for bearer tokens (an HMAC's length is public, a token's is not).
 */
export const stringsEqual = (a: string, b: string): boolean =>
  timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());

/**
 * HMAC-SHA256 over the parts in order. Parts are fed one by one so a large body is never concatenated
 * (copied) with its prefix.
 */
export const hmacSha256 = (key: string | Uint8Array, parts: readonly (string | Uint8Array)[]): Buffer =>
  hmacOf('sha256', key, parts);

/** The HMAC digests senders use: SHA-1 only where a sender still signs with it (Twilio, Intercom). */
export type HmacAlgorithm = 'sha1' | 'sha256' | 'sha512';

/** HMAC with the given digest over the parts in order, fed one by one as `hmacSha256` does. */
export const hmacOf = (
  algorithm: HmacAlgorithm,
  key: string | Uint8Array,
  parts: readonly (string | Uint8Array)[],
): Buffer => {
  const hmac = createHmac(algorithm, key);
  for (const part of parts) hmac.update(part);
  return hmac.digest();
};

/**
 * True when, for some key, the HMAC (SHA-256 unless told) over the parts equals one of the presented signatures.
 * One HMAC per key however many signatures were presented; stopping at the first match only reveals
 * what the caller learns anyway (that the delivery was accepted).
 */
export const anyHmacMatches = (
  keys: readonly (string | Uint8Array)[],
  parts: readonly (string | Uint8Array)[],
  signatures: readonly Uint8Array[],
  algorithm: HmacAlgorithm = 'sha256',
): boolean => {
  if (signatures.length === 0) return false;
  return keys.some((key) => {
    const expected = hmacOf(algorithm, key, parts);
    return signatures.some((signature) => bytesEqual(expected, signature));
  });
};
