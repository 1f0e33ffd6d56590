import { randomUUID } from 'node:crypto';
import { headerHmacScheme } from './common/header-hmac-scheme';

/**
 * Shopify: `X-Shopify-Hmac-Sha256`, base64 HMAC-SHA256 of the raw body. Delivery id: X-Shopify-Webhook-Id,
 * the same on every retry but unsigned, so the signed body dedupes too; to dedupe per event across
 * subscriptions, set `deliveryId: $headers."x-shopify-event-id"`.
 */
export const shopify = headerHmacScheme({
  name: 'shopify',
  signature: { header: 'x-shopify-hmac-sha256', display: 'X-Shopify-Hmac-Sha256' },
  format: { algorithm: 'sha256', encoding: 'base64' },
  delivery: { header: 'x-shopify-webhook-id', display: 'X-Shopify-Webhook-Id' },
  secretValuePrefixes: ['shpss_'],
  extraHeaders: (input) => ({
    'x-shopify-event-id': (input.newId ?? randomUUID)(),
    'x-shopify-triggered-at': input.now.toISOString(),
  }),
});
