import { assertHmacMatches, formatHmac, type HmacFormat, requireHmac } from './common/body-hmac';
import { requireHeader, requireSecrets } from './common/headers';
import { hexDevSecret, requireUrl, signingSecret, signingUrl } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = 'x-square-hmacsha256-signature';
const DISPLAY = 'X-Square-HmacSha256-Signature';
const FORMAT: HmacFormat = { algorithm: 'sha256', encoding: 'base64' };

/**
 * Square: `X-Square-HmacSha256-Signature: <base64 HMAC-SHA256 over notification URL + raw body>` with the
 * subscription's signature key; the URL is the one the subscription names, exactly (set `publicUrl` behind
 * a custom domain or proxy). No timestamp. The delivery id is the body's `event_id`, which is signed.
 */
export const square: SenderScheme<'square'> = {
  name: 'square',
  takesSecret: true,
  options: {},
  // x-square-signature is the legacy HMAC-SHA1 Square still sends beside the SHA-256 one.
  secretHeaders: [SIGNATURE, 'x-square-signature'],
  // Square access tokens pasted where a secret NAME belongs.
  secretValuePrefixes: ['EAAA'],
  deliveryId: { bodyField: 'event_id' },

  devSecret: hexDevSecret,

  verify({ rawBody, headers, secrets, url }) {
    const keys = requireSecrets(secrets, 'square');
    const notificationUrl = requireUrl(url, 'square');
    const signature = requireHmac(requireHeader(headers, SIGNATURE, DISPLAY), FORMAT, DISPLAY);
    assertHmacMatches(keys, [notificationUrl, rawBody], [signature], FORMAT.algorithm, DISPLAY);
    return { scheme: 'square' };
  },

  sign(input) {
    return { [SIGNATURE]: formatHmac(signingSecret(input), [signingUrl(input), input.rawBody], FORMAT) };
  },
};
