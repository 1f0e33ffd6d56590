import { assertHmacMatches, formatHmac, type HmacFormat, requireHmac } from './common/body-hmac';
import { requireHeader, requireSecrets } from './common/headers';
import { hexDevSecret, signingSecret } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = 'typeform-signature';
const FORMAT: HmacFormat = { algorithm: 'sha256', encoding: 'base64', prefix: 'sha256=' };

/**
 * Typeform: `Typeform-Signature: sha256=<base64 HMAC-SHA256 of the raw body>` with the webhook's secret;
 * no timestamp. The delivery id is the body's `event_id`, which the signature covers.
 */
export const typeform: SenderScheme<'typeform'> = {
  name: 'typeform',
  takesSecret: true,
  options: {},
  secretHeaders: [SIGNATURE],
  secretValuePrefixes: [],
  deliveryId: { bodyField: 'event_id' },

  devSecret: hexDevSecret,

  verify({ rawBody, headers, secrets }) {
    const keys = requireSecrets(secrets, 'typeform');
    const signature = requireHmac(
      requireHeader(headers, SIGNATURE, 'Typeform-Signature'),
      FORMAT,
      'Typeform-Signature',
    );
    assertHmacMatches(keys, [rawBody], [signature], FORMAT.algorithm, 'Typeform-Signature');
    return { scheme: 'typeform' };
  },

  sign(input) {
    return { [SIGNATURE]: formatHmac(signingSecret(input), [input.rawBody], FORMAT) };
  },
};
