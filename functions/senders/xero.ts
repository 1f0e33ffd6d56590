import { signBodyHmac, verifyBodyHmac } from './common/body-hmac';
import { jsonObjectOf } from './common/handshake';
import { requireSecrets } from './common/headers';
import { hexDevSecret, signingSecret } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = { name: 'x-xero-signature', display: 'x-xero-signature', encoding: 'base64' } as const;

/**
 * Xero: `x-xero-signature`, base64 HMAC-SHA256 of the raw body with the webhook key. The intent-to-receive
 * check's payloads, some signed wrongly on purpose, are answered 200 or 401 as they verify, with no job.
 * Delivery id: the body hash.
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
