import { stringsEqual } from './common/constant-time';
import { SignatureError, VerifyConfigError } from './common/errors';
import { requireHeader, requireSecrets } from './common/headers';
import { hexDevSecret, signingSecret } from './common/signing';
import type { SenderScheme } from './types';

const AUTHORIZATION = 'authorization';
// RFC 9110: the auth scheme is case-insensitive, followed by one or more spaces.
const BEARER = /^bearer +(\S(?:.*\S)?)$/i;

/**
 * A shared secret in a header: `Authorization: Bearer <secret>` by default; with a custom `header`,
 * its whole value is the token. Proves only that the sender knows the secret: the body is not signed.
 */
export const token: SenderScheme<'token'> = {
  name: 'token',
  takesSecret: true,
  options: { header: { describe: 'header carrying the token', default: AUTHORIZATION } },
  // A custom header is added from the config by redactHeaders.
  secretHeaders: [AUTHORIZATION],
  secretValuePrefixes: [],

  devSecret: hexDevSecret,

  verify({ headers, secrets, config }) {
    const tokens = requireSecrets(secrets, 'token');
    const configured = config.header?.trim();
    if (configured === '') throw new VerifyConfigError('verify.header must not be empty');
    const display = configured ?? 'Authorization';
    const name = display.toLowerCase();
    const header = requireHeader(headers, name, display);

    let presented = header;
    if (name === AUTHORIZATION) {
      const match = BEARER.exec(header);
      if (!match?.[1]) {
        throw new SignatureError('SIGNATURE_MALFORMED', 'Authorization header is not a Bearer token');
      }
      presented = match[1];
    }
    // Compare against every configured token so which one matched (rotation) is not timed.
    let matched = false;
    for (const candidate of tokens) matched = stringsEqual(presented, candidate) || matched;
    if (!matched) throw new SignatureError('SIGNATURE_INVALID', `${display} token is not valid`);
    return { scheme: 'token' };
  },

  sign(input) {
    const header = input.config.header?.trim().toLowerCase() || AUTHORIZATION;
    const secret = signingSecret(input);
    return { [header]: header === AUTHORIZATION ? `Bearer ${secret}` : secret };
  },
};
