import { anyHmacMatches } from './constant-time';
import { decodeHex } from './encoding';
import { SignatureError } from './errors';
import { readHeader, requireHeader, requireSecrets } from './headers';
import type { SchemeVerifier } from './types';

const PREFIX = 'sha256=';

/** GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`; delivery id from X-GitHub-Delivery. */
export const verifyGithub: SchemeVerifier = ({ rawBody, headers, secrets }) => {
  const keys = requireSecrets(secrets, 'github');
  const header = requireHeader(headers, 'x-hub-signature-256', 'X-Hub-Signature-256');
  const signature = header.startsWith(PREFIX) ? decodeHex(header.slice(PREFIX.length)) : undefined;
  if (signature?.length !== 32) {
    throw new SignatureError(
      'SIGNATURE_MALFORMED',
      'X-Hub-Signature-256 header is not sha256=<64 hex digits>',
    );
  }
  if (!anyHmacMatches(keys, [rawBody], [signature])) {
    throw new SignatureError('SIGNATURE_INVALID', 'X-Hub-Signature-256 does not match the body');
  }
  // X-GitHub-Delivery is not signed; it is only a dedupe key, and a forged one still needs a valid signature.
  return { scheme: 'github', deliveryId: readHeader(headers, 'x-github-delivery', 'X-GitHub-Delivery') };
};
