import { assertHmacMatches, formatHmac, type HmacFormat, requireHmac } from './common/body-hmac';
import { requireHeader, requireSecrets } from './common/headers';
import { hexDevSecret, signingSecret } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = 'x-hub-signature';
const FORMAT: HmacFormat = { algorithm: 'sha1', encoding: 'hex', prefix: 'sha1=' };

/**
 * Intercom: `X-Hub-Signature: sha1=<hex HMAC-SHA1 of the raw body>` keyed with the app's client secret;
 * no timestamp. The delivery id is the notification's `id` (`notif_...`), which the signature covers.
 */
export const intercom: SenderScheme<'intercom'> = {
  name: 'intercom',
  takesSecret: true,
  options: {},
  secretHeaders: [SIGNATURE],
  secretValuePrefixes: [],
  deliveryId: { bodyField: 'id' },

  devSecret: hexDevSecret,

  verify({ rawBody, headers, secrets }) {
    const keys = requireSecrets(secrets, 'intercom');
    const signature = requireHmac(
      requireHeader(headers, SIGNATURE, 'X-Hub-Signature'),
      FORMAT,
      'X-Hub-Signature',
    );
    assertHmacMatches(keys, [rawBody], [signature], FORMAT.algorithm, 'X-Hub-Signature');
    return { scheme: 'intercom' };
  },

  sign(input) {
    return { [SIGNATURE]: formatHmac(signingSecret(input), [input.rawBody], FORMAT) };
  },
};
