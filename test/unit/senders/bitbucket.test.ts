import { createHmac } from 'node:crypto';
import { describeHeaderHmac } from './header-hmac-cases';

// Bitbucket Cloud's docs: `sha256=` + hex HMAC-SHA256 of the raw body with the webhook secret.
describe('bitbucket scheme', () => {
  describeHeaderHmac({
    config: { scheme: 'bitbucket', secret: 'docrelay/bitbucket' },
    header: 'x-hub-signature',
    display: 'X-Hub-Signature',
    sign: (secret, body) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    deliveryHeader: 'x-request-uuid',
    extraHeaders: { 'x-event-key': 'repo:push' },
  });
});
