import { createHmac } from 'node:crypto';
import { describeHeaderHmac } from './header-hmac-cases';

// WooCommerce (WC_Webhook::generate_signature): base64 HMAC-SHA256 of the payload with the webhook secret.
describe('woocommerce scheme', () => {
  describeHeaderHmac({
    config: { scheme: 'woocommerce', secret: 'docrelay/woocommerce' },
    header: 'x-wc-webhook-signature',
    display: 'X-WC-Webhook-Signature',
    sign: (secret, body) => createHmac('sha256', secret).update(body).digest('base64'),
    deliveryHeader: 'x-wc-webhook-delivery-id',
  });
});
