import { stringsEqual } from './constant-time';
import { SignatureError, VerifyConfigError } from './errors';
import { requireHeader, requireSecrets } from './headers';
import type { SchemeVerifier } from './types';

// RFC 9110: the auth scheme is case-insensitive, followed by one or more spaces.
const BEARER = /^bearer +(\S(?:.*\S)?)$/i;

/**
 * A shared secret in a header: `Authorization: Bearer <secret>` by default; with a custom `header`,
 * its whole value is the token. Proves only that the sender knows the secret: the body is not signed.
 */
export const verifyToken: SchemeVerifier = ({ headers, secrets, config }) => {
  const tokens = requireSecrets(secrets, 'token');
  const configured = config.header?.trim();
  if (configured === '') throw new VerifyConfigError('verify.header must not be empty');
  const display = configured ?? 'Authorization';
  const name = display.toLowerCase();
  const header = requireHeader(headers, name, display);

  let presented = header;
  if (name === 'authorization') {
    const match = BEARER.exec(header);
    if (!match?.[1]) {
      throw new SignatureError('SIGNATURE_MALFORMED', 'Authorization header is not a Bearer token');
    }
    presented = match[1];
  }
  // Compare against every configured token so which one matched (rotation) is not timed.
  let matched = false;
  for (const token of tokens) matched = stringsEqual(presented, token) || matched;
  if (!matched) throw new SignatureError('SIGNATURE_INVALID', `${display} token is not valid`);
  return { scheme: 'token' };
};
