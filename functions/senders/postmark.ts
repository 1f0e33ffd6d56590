import { stringsEqual } from './common/constant-time';
import { SignatureError, SigningError, VerifyConfigError } from './common/errors';
import { requireHeader, requireSecrets } from './common/headers';
import { signingSecret } from './common/signing';
import type { SenderScheme } from './types';

const AUTHORIZATION = 'authorization';
// RFC 7617: the scheme is case-insensitive, then the base64 of `user:password`.
const BASIC = /^basic +([A-Za-z0-9+/]+={0,2})$/i;

/** The secret holds `user:password`, exactly what goes before the `@` of the webhook URL. */
function credentials(secret: string, index: number, refuse: (message: string) => Error): string {
  const colon = secret.indexOf(':');
  if (colon <= 0) throw refuse(`postmark secret #${index + 1} is not user:password`);
  return secret;
}

/**
 * Postmark: HTTP Basic credentials written into the webhook URL. Postmark signs nothing, so this proves only
 * that the sender knows them. A bounce and an open of one message share its MessageID, so the body hash is
 * the default delivery id.
 */
export const postmark: SenderScheme<'postmark'> = {
  name: 'postmark',
  takesSecret: true,
  options: {},
  secretHeaders: [AUTHORIZATION],
  secretValuePrefixes: [],

  devSecret: (random) => `docrelay:${random.toString('hex')}`,

  verify({ headers, secrets }) {
    const expected = requireSecrets(secrets, 'postmark').map((secret, index) =>
      credentials(secret, index, (message) => new VerifyConfigError(message)),
    );
    const header = requireHeader(headers, AUTHORIZATION, 'Authorization');
    const match = BASIC.exec(header.trim());
    if (!match?.[1]) {
      throw new SignatureError('SIGNATURE_MALFORMED', 'Authorization header is not Basic credentials');
    }
    const presented = Buffer.from(match[1], 'base64').toString('utf8');
    // Compare against every configured pair so which one matched (rotation) is not timed.
    let matched = false;
    for (const candidate of expected) matched = stringsEqual(presented, candidate) || matched;
    if (!matched) throw new SignatureError('SIGNATURE_INVALID', 'Authorization credentials are not valid');
    return { scheme: 'postmark' };
  },

  sign(input) {
    const pair = credentials(signingSecret(input), 0, (message) => new SigningError(message));
    return { [AUTHORIZATION]: `Basic ${Buffer.from(pair, 'utf8').toString('base64')}` };
  },
};
