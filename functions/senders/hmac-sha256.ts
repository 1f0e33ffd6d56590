import { anyHmacMatches } from './constant-time';
import { decodeBase64, decodeHex } from './encoding';
import { SignatureError, VerifyConfigError } from './errors';
import { requireHeader, requireSecrets } from './headers';
import type { SchemeVerifier } from './types';

/**
 * Generic HMAC-SHA256 of the raw body in a configured header, hex or base64, after an optional literal
 * prefix (e.g. `sha256=`) that the value must start with.
 */
export const verifyHmacSha256: SchemeVerifier = ({ rawBody, headers, secrets, config }) => {
  const keys = requireSecrets(secrets, 'hmac-sha256');
  const display = config.header;
  if (typeof display !== 'string' || display.trim() === '') {
    throw new VerifyConfigError('verify scheme hmac-sha256 needs a header');
  }
  const encoding = config.encoding ?? 'hex';
  if (encoding !== 'hex' && encoding !== 'base64') {
    throw new VerifyConfigError('verify.encoding must be hex or base64');
  }
  const prefix = config.prefix ?? '';

  const header = requireHeader(headers, display.trim().toLowerCase(), display);
  if (!header.startsWith(prefix)) {
    throw new SignatureError(
      'SIGNATURE_MALFORMED',
      `${display} header does not start with the configured prefix`,
    );
  }
  const encoded = header.slice(prefix.length);
  const signature = encoding === 'hex' ? decodeHex(encoded) : decodeBase64(encoded);
  if (signature?.length !== 32) {
    throw new SignatureError('SIGNATURE_MALFORMED', `${display} header is not a ${encoding} HMAC-SHA256`);
  }
  if (!anyHmacMatches(keys, [rawBody], [signature])) {
    throw new SignatureError('SIGNATURE_INVALID', `${display} does not match the body`);
  }
  return { scheme: 'hmac-sha256' };
};
