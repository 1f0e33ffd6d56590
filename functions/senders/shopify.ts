import { randomUUID } from 'node:crypto';
import { anyHmacMatches, hmacSha256 } from './common/constant-time';
import { decodeBase64 } from './common/encoding';
import { SignatureError } from './common/errors';
import { readHeader, requireHeader, requireSecrets } from './common/headers';
import { hexDevSecret, signingSecret } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = 'x-shopify-hmac-sha256';
// Shopify's duplicate detection: the webhook id is the same on every retry of one delivery. The event id
// is shared by the deliveries of one event to several subscriptions (event-level dedupe across topics).
const DELIVERY = 'x-shopify-webhook-id';
const EVENT_ID = 'x-shopify-event-id';

/**
 * Shopify: `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the raw body>`; delivery id from
 * X-Shopify-Webhook-Id (not signed: the signed body dedupes too). To dedupe per event instead, set
 * `deliveryId: $headers."x-shopify-event-id"`.
 */
export const shopify: SenderScheme<'shopify'> = {
  name: 'shopify',
  takesSecret: true,
  options: {},
  secretHeaders: [SIGNATURE],
  secretValuePrefixes: ['shpss_'],
  deliveryId: { header: DELIVERY, signed: false },

  devSecret: hexDevSecret,

  verify({ rawBody, headers, secrets }) {
    const keys = requireSecrets(secrets, 'shopify');
    const header = requireHeader(headers, SIGNATURE, 'X-Shopify-Hmac-Sha256');
    const signature = decodeBase64(header);
    if (signature?.length !== 32) {
      throw new SignatureError(
        'SIGNATURE_MALFORMED',
        'X-Shopify-Hmac-Sha256 header is not a base64 HMAC-SHA256',
      );
    }
    if (!anyHmacMatches(keys, [rawBody], [signature])) {
      throw new SignatureError('SIGNATURE_INVALID', 'X-Shopify-Hmac-Sha256 does not match the body');
    }
    return {
      scheme: 'shopify',
      deliveryId: readHeader(headers, DELIVERY, 'X-Shopify-Webhook-Id'),
      bodyMac: signature,
    };
  },

  sign(input) {
    return {
      [SIGNATURE]: hmacSha256(signingSecret(input), [input.rawBody]).toString('base64'),
      [DELIVERY]: input.deliveryId ?? (input.newId ?? randomUUID)(),
      [EVENT_ID]: (input.newId ?? randomUUID)(),
      'x-shopify-triggered-at': input.now.toISOString(),
    };
  },
};
