import { randomUUID } from 'node:crypto';
import { assertHmacMatches, formatHmac, type HmacFormat, requireHmac } from './common/body-hmac';
import { readHeader, requireHeader, requireSecrets } from './common/headers';
import { hexDevSecret, signingSecret } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = 'x-hub-signature';
const DELIVERY = 'x-request-uuid';
const FORMAT: HmacFormat = { algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=' };

/**
 * Bitbucket Cloud: `X-Hub-Signature: sha256=<hex HMAC-SHA256 of the raw body>` with the webhook's secret;
 * no timestamp. The delivery id is `X-Request-UUID` (the same on a redelivery), which is not signed.
 */
export const bitbucket: SenderScheme<'bitbucket'> = {
  name: 'bitbucket',
  takesSecret: true,
  options: {},
  secretHeaders: [SIGNATURE],
  secretValuePrefixes: [],
  deliveryId: { header: DELIVERY, signed: false },

  devSecret: hexDevSecret,

  verify({ rawBody, headers, secrets }) {
    const keys = requireSecrets(secrets, 'bitbucket');
    const signature = requireHmac(
      requireHeader(headers, SIGNATURE, 'X-Hub-Signature'),
      FORMAT,
      'X-Hub-Signature',
    );
    assertHmacMatches(keys, [rawBody], [signature], FORMAT.algorithm, 'X-Hub-Signature');
    return { scheme: 'bitbucket', deliveryId: readHeader(headers, DELIVERY, 'X-Request-UUID') };
  },

  sign(input) {
    return {
      [SIGNATURE]: formatHmac(signingSecret(input), [input.rawBody], FORMAT),
      [DELIVERY]: input.deliveryId ?? (input.newId ?? randomUUID)(),
      'x-event-key': 'repo:push',
    };
  },
};
