import { randomUUID } from 'node:crypto';
import { assertHmacMatches, formatHmac, type HmacFormat, requireHmac } from './common/body-hmac';
import { readHeader, requireHeader, requireSecrets } from './common/headers';
import { hexDevSecret, signingSecret } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = 'x-hub-signature';
const DELIVERY = 'x-atlassian-webhook-identifier';
const FORMAT: HmacFormat = { algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=' };

/**
 * Jira Cloud (admin webhooks created with a secret): `X-Hub-Signature:
 * sha256=<hex HMAC-SHA256 of the raw body>`; no timestamp. The delivery id is
 * `X-Atlassian-Webhook-Identifier`, the same on every retry of one delivery, and not signed.
 */
export const jira: SenderScheme<'jira'> = {
  name: 'jira',
  takesSecret: true,
  options: {},
  secretHeaders: [SIGNATURE],
  secretValuePrefixes: [],
  deliveryId: { header: DELIVERY, signed: false },

  devSecret: hexDevSecret,

  verify({ rawBody, headers, secrets }) {
    const keys = requireSecrets(secrets, 'jira');
    const signature = requireHmac(
      requireHeader(headers, SIGNATURE, 'X-Hub-Signature'),
      FORMAT,
      'X-Hub-Signature',
    );
    assertHmacMatches(keys, [rawBody], [signature], FORMAT.algorithm, 'X-Hub-Signature');
    return { scheme: 'jira', deliveryId: readHeader(headers, DELIVERY, 'X-Atlassian-Webhook-Identifier') };
  },

  sign(input) {
    return {
      [SIGNATURE]: formatHmac(signingSecret(input), [input.rawBody], FORMAT),
      [DELIVERY]: input.deliveryId ?? (input.newId ?? randomUUID)(),
    };
  },
};
