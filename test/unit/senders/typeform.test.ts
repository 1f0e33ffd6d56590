import { createHmac } from 'node:crypto';
import { describeHeaderHmac } from './header-hmac-cases';

// Typeform's docs: `sha256=` + base64 HMAC-SHA256 of the raw payload with the webhook secret.
describe('typeform scheme', () => {
  describeHeaderHmac({
    config: { scheme: 'typeform', secret: 'docrelay/typeform' },
    header: 'typeform-signature',
    display: 'Typeform-Signature',
    sign: (secret, body) => `sha256=${createHmac('sha256', secret).update(body).digest('base64')}`,
  });
});
