import { headerHmacScheme } from './common/header-hmac-scheme';

/**
 * WooCommerce: `X-WC-Webhook-Signature: <base64 HMAC-SHA256 of the raw body>` with the webhook's secret;
 * no timestamp. The delivery id is `X-WC-Webhook-Delivery-ID`, not signed.
 */
export const woocommerce = headerHmacScheme({
  name: 'woocommerce',
  signature: { header: 'x-wc-webhook-signature', display: 'X-WC-Webhook-Signature' },
  format: { algorithm: 'sha256', encoding: 'base64' },
  delivery: { header: 'x-wc-webhook-delivery-id', display: 'X-WC-Webhook-Delivery-ID' },
  extraHeaders: { 'x-wc-webhook-topic': 'order.created' },
});
