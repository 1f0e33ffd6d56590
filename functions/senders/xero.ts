import { signBodyHmac, verifyBodyHmac } from './common/body-hmac';
import { jsonObjectOf } from './common/handshake';
import { requireSecrets } from './common/headers';
import { hexDevSecret, signingSecret } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = { name: 'x-xero-signature', display: 'x-xero-signature', encoding: 'base64' } as const;

/**
 * Xero: `x-xero-signature`, the base64 HMAC-SHA256 of the raw body keyed with the webhook key. The
 * intent-to-receive check posts payloads with no events, some signed correctly and some not: each is
 * verified, answered 200 with an empty body when it verifies and 401 when it does not, and no job is made.
 * Delivery id: none (the body hash).
 */
export const xero: SenderScheme<'xero'> = {
  name: 'xero',
  takesSecret: true,
  options: {},
  secretHeaders: [SIGNATURE.name],
  secretValuePrefixes: [],

  devSecret: hexDevSecret,

  handshake({ rawBody, headers, secrets }) {
    const events = jsonObjectOf(rawBody)?.events;
    if (!Array.isArray(events) || events.length > 0) return undefined;
    verifyBodyHmac(SIGNATURE, headers, requireSecrets(secrets, 'xero'), rawBody);
    return { status: 200, contentType: 'text/plain', body: '' };
  },

  verify({ rawBody, headers, secrets }) {
    verifyBodyHmac(SIGNATURE, headers, requireSecrets(secrets, 'xero'), rawBody);
    return { scheme: 'xero' };
  },

  sign(input) {
    return { [SIGNATURE.name]: signBodyHmac(SIGNATURE, signingSecret(input), input.rawBody) };
  },
};
