import { randomUUID } from 'node:crypto';
import { anyHmacMatches, hmacSha256 } from './common/constant-time';
import { decodeBase64 } from './common/encoding';
import { SignatureError } from './common/errors';
import { readHeader, requireHeader, requireSecrets } from './common/headers';
import { hexDevSecret, signingSecret } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = 'x-shopify-hmac-sha256';
// Shopify's advice: dedupe on the event id (the same for every delivery and retry of one event); the
// webhook id names one delivery attempt's subscription message.
const DELIVERY = 'x-shopify-event-id';
const WEBHOOK_ID = 'x-shopify-webhook-id';

/** Shopify: `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the raw body>`; delivery id from X-Shopify-Event-Id. */
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
      deliveryId: readHeader(headers, DELIVERY, 'X-Shopify-Event-Id'),
      bodyMac: signature,
    };
  },

  sign(input) {
    return {
      [SIGNATURE]: hmacSha256(signingSecret(input), [input.rawBody]).toString('base64'),
      [DELIVERY]: input.deliveryId ?? (input.newId ?? randomUUID)(),
      [WEBHOOK_ID]: (input.newId ?? randomUUID)(),
      'x-shopify-triggered-at': input.now.toISOString(),
    };
  },
};
