import { createHmac } from 'node:crypto';
import { describeHeaderHmac } from './header-hmac-cases';

// Jira Cloud's docs (webhooks with a secret): `sha256=` + hex HMAC-SHA256 of the raw body.
describe('jira scheme', () => {
  describeHeaderHmac({
    config: { scheme: 'jira', secret: 'docrelay/jira' },
    header: 'x-hub-signature',
    display: 'X-Hub-Signature',
    sign: (secret, body) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    deliveryHeader: 'x-atlassian-webhook-identifier',
  });
});
