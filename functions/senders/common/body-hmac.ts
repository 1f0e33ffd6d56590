import { anyHmacMatches, type HmacAlgorithm, hmacOf, hmacSha256 } from './constant-time';
import { decodeBase64, decodeHex } from './encoding';
import { SignatureError } from './errors';
import { requireHeader } from './headers';

/** Digest lengths in bytes: a presented signature of another length cannot be one. */
const DIGEST_BYTES: Readonly<Record<HmacAlgorithm, number>> = { sha1: 20, sha256: 32, sha512: 64 };

/** How one sender writes an HMAC of some signed content into a header value. */
export interface HmacFormat {
  /** The HMAC digest. */
  readonly algorithm: HmacAlgorithm;
  /** How the digest is written. */
  readonly encoding: 'hex' | 'base64';
  /** A literal the value starts with, e.g. `sha256=`. @default '' */
  readonly prefix?: string;
}

/**
 * Decodes one header value written in this format; undefined when it is not one (wrong prefix, encoding or
 * length), so the caller decides whether that refuses the delivery or just cannot match.
 */
export function decodeHmac(value: string, format: HmacFormat): Buffer | undefined {
  const prefix = format.prefix ?? '';
  if (!value.startsWith(prefix)) return undefined;
  const encoded = value.slice(prefix.length);
  const digest = format.encoding === 'hex' ? decodeHex(encoded) : decodeBase64(encoded);
  return digest?.length === DIGEST_BYTES[format.algorithm] ? digest : undefined;
}

/** Like decodeHmac, but a value not in the format refuses the delivery, naming the header and the format. */
export function requireHmac(value: string, format: HmacFormat, display: string): Buffer {
  const digest = decodeHmac(value, format);
  if (digest === undefined) {
    const shape = `${format.prefix ?? ''}<${format.encoding} HMAC-${format.algorithm.toUpperCase()}>`;
    throw new SignatureError('SIGNATURE_MALFORMED', `${display} header is not ${shape}`);
  }
  return digest;
}

/** Refuses the delivery unless, for some key, the HMAC over the parts is one of the signatures. */
export function assertHmacMatches(
  keys: readonly (string | Uint8Array)[],
  parts: readonly (string | Uint8Array)[],
  signatures: readonly Uint8Array[],
  algorithm: HmacAlgorithm,
  display: string,
): void {
  if (!anyHmacMatches(keys, parts, signatures, algorithm)) {
    throw new SignatureError('SIGNATURE_INVALID', `${display} does not match the body`);
  }
}

/** The header value a sender writing this format would send for the parts. */
export const formatHmac = (
  key: string | Uint8Array,
  parts: readonly (string | Uint8Array)[],
  format: HmacFormat,
): string => `${format.prefix ?? ''}${hmacOf(format.algorithm, key, parts).toString(format.encoding)}`;

/** How a sender writes an HMAC-SHA256 of the raw body in one header. */
export interface BodyHmacHeader {
  /** Lower-case header name. */
  readonly name: string;
  /** The documented spelling, for messages. */
  readonly display: string;
  readonly encoding: 'hex' | 'base64';
  /** A literal before the digest, e.g. `sha256=`. */
  readonly prefix?: string;
}

/** Refuses a delivery unless the header holds HMAC-SHA256 of the raw body under one of the keys. */
export function verifyBodyHmac(
  header: BodyHmacHeader,
  headers: Readonly<Record<string, string>>,
  keys: readonly string[],
  rawBody: Uint8Array,
): void {
  const value = requireHeader(headers, header.name, header.display);
  const prefix = header.prefix ?? '';
  const encoded = value.startsWith(prefix) ? value.slice(prefix.length) : undefined;
  const signature =
    encoded === undefined
      ? undefined
      : header.encoding === 'hex'
        ? decodeHex(encoded)
        : decodeBase64(encoded);
  if (signature?.length !== 32) {
    throw new SignatureError(
      'SIGNATURE_MALFORMED',
      `${header.display} header is not ${prefix}<${header.encoding} HMAC-SHA256>`,
    );
  }
  if (!anyHmacMatches(keys, [rawBody], [signature])) {
    throw new SignatureError('SIGNATURE_INVALID', `${header.display} does not match the body`);
  }
}

/** The header value that signs these bytes. */
export const signBodyHmac = (header: BodyHmacHeader, key: string, rawBody: Uint8Array): string =>
  `${header.prefix ?? ''}${hmacSha256(key, [rawBody]).toString(header.encoding)}`;
