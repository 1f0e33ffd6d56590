import { signBodyHmac, verifyBodyHmac } from './common/body-hmac';
import { stringsEqual } from './common/constant-time';
import { SignatureError } from './common/errors';
import { textAnswer } from './common/handshake';
import { readHeader, requireSecrets } from './common/headers';
import { hexDevSecret, signingSecret } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = { name: 'x-hook-signature', display: 'X-Hook-Signature', encoding: 'hex' } as const;
const HOOK_SECRET = 'x-hook-secret';

/** Values of the configured secret that mean "no X-Hook-Secret kept yet". */
const PENDING = new Set(['', 'pending']);

/**
 * Asana: `X-Hook-Signature`, the hex HMAC-SHA256 of the raw body keyed with the secret Asana handed over in
 * its handshake. The handshake (a POST with `X-Hook-Secret` and no signature) is echoed back, and the
 * secret kept under the integration's secret name: only while that secret is still unset (empty or
 * `pending`), or when Asana presents the secret already kept, so nobody can replace a kept secret by
 * posting a handshake. Delivery id: none (the body hash).
 */
export const asana: SenderScheme<'asana'> = {
  name: 'asana',
  takesSecret: true,
  options: {},
  secretHeaders: [SIGNATURE.name, HOOK_SECRET],
  secretValuePrefixes: [],

  devSecret: hexDevSecret,
  keepsHandedSecret: true,

  async handshake({ headers, secrets }, context) {
    const offered = readHeader(headers, HOOK_SECRET, 'X-Hook-Secret');
    if (offered === undefined) return undefined;
    const kept = secrets[0] ?? '';
    if (PENDING.has(kept.trim())) await context.keepSecret(offered);
    else if (!stringsEqual(kept, offered)) {
      throw new SignatureError(
        'SIGNATURE_INVALID',
        'an X-Hook-Secret is already kept for this integration; reset its secret to "pending" to accept a new one',
      );
    }
    return textAnswer('', { 'x-hook-secret': offered });
  },

  verify({ rawBody, headers, secrets }) {
    const keys = requireSecrets(secrets, 'asana').filter((secret) => !PENDING.has(secret.trim()));
    if (keys.length === 0) {
      throw new SignatureError(
        'SIGNATURE_INVALID',
        'no X-Hook-Secret has been kept yet: the handshake comes first',
      );
    }
    verifyBodyHmac(SIGNATURE, headers, keys, rawBody);
    return { scheme: 'asana' };
  },

  sign(input) {
    return { [SIGNATURE.name]: signBodyHmac(SIGNATURE, signingSecret(input), input.rawBody) };
  },
};
