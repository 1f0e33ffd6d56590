import { createHmac } from 'node:crypto';
import { describeHeaderHmac } from './header-hmac-cases';

// Intercom's docs: `sha1=` + hex HMAC-SHA1 of the raw body with the app's client secret.
describe('intercom scheme', () => {
  describeHeaderHmac({
    config: { scheme: 'intercom', secret: 'docrelay/intercom' },
    header: 'x-hub-signature',
    display: 'X-Hub-Signature',
    sign: (secret, body) => `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`,
  });
});
