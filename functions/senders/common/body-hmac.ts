import { anyHmacMatches, hmacSha256 } from './constant-time';
import { decodeBase64, decodeHex } from './encoding';
import { SignatureError } from './errors';
import { requireHeader } from './headers';

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
