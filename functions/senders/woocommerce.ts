import { randomUUID } from 'node:crypto';
import { assertHmacMatches, formatHmac, type HmacFormat, requireHmac } from './common/body-hmac';
import { readHeader, requireHeader, requireSecrets } from './common/headers';
import { hexDevSecret, signingSecret } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = 'x-wc-webhook-signature';
const DELIVERY = 'x-wc-webhook-delivery-id';
const FORMAT: HmacFormat = { algorithm: 'sha256', encoding: 'base64' };

/**
 * WooCommerce: `X-WC-Webhook-Signature: <base64 HMAC-SHA256 of the raw body>` with the webhook's secret;
 * no timestamp. The delivery id is `X-WC-Webhook-Delivery-ID`, not signed.
 */
export const woocommerce: SenderScheme<'woocommerce'> = {
  name: 'woocommerce',
  takesSecret: true,
  options: {},
  secretHeaders: [SIGNATURE],
  secretValuePrefixes: [],
  deliveryId: { header: DELIVERY, signed: false },

  devSecret: hexDevSecret,

  verify({ rawBody, headers, secrets }) {
    const keys = requireSecrets(secrets, 'woocommerce');
    const display = 'X-WC-Webhook-Signature';
    const signature = requireHmac(requireHeader(headers, SIGNATURE, display), FORMAT, display);
    assertHmacMatches(keys, [rawBody], [signature], FORMAT.algorithm, display);
    return { scheme: 'woocommerce', deliveryId: readHeader(headers, DELIVERY, 'X-WC-Webhook-Delivery-ID') };
  },

  sign(input) {
    return {
      [SIGNATURE]: formatHmac(signingSecret(input), [input.rawBody], FORMAT),
      [DELIVERY]: input.deliveryId ?? (input.newId ?? randomUUID)(),
      'x-wc-webhook-topic': 'order.created',
    };
  },
};
