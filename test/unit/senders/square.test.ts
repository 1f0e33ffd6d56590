import { createHmac } from 'node:crypto';
import { signDelivery, verifyDelivery } from '../../../functions/senders';
import { expectConfigError, expectRefused, HOOK_URL, input, NOW } from './fixtures';
import { describeHeaderHmac } from './header-hmac-cases';

// Square's docs (WebhooksHelper.isValidWebhookEventSignature): base64 HMAC-SHA256 of notification URL + body.
const sign = (secret: string, body: Buffer, url = HOOK_URL) =>
  createHmac('sha256', secret)
    .update(url + body.toString())
    .digest('base64');

describe('square scheme', () => {
  describeHeaderHmac({
    config: { scheme: 'square', secret: 'docrelay/square' },
    header: 'x-square-hmacsha256-signature',
    display: 'X-Square-HmacSha256-Signature',
    sign: (secret, body) => sign(secret, body),
  });

  it('refuses a signature made for another URL, and needs the public URL', () => {
    const body = Buffer.from('{"merchant_id":"M1","type":"payment.created","event_id":"e1"}');
    const delivery = input(
      { scheme: 'square', secret: 'docrelay/square' },
      {
        secrets: ['k'],
        rawBody: body,
        headers: { 'x-square-hmacsha256-signature': sign('k', body, `${HOOK_URL}&x=1`) },
      },
    );
    expectRefused(delivery, 'SIGNATURE_INVALID');
    expectConfigError({ ...delivery, url: '' });
  });

  it('signs for the URL it is given', () => {
    const body = Buffer.from('{"event_id":"e1"}');
    const headers = signDelivery({
      config: { scheme: 'square' },
      secrets: ['k'],
      rawBody: body,
      now: NOW,
      url: HOOK_URL,
    });
    expect(headers['x-square-hmacsha256-signature']).toBe(sign('k', body));
    expect(() =>
      signDelivery({ config: { scheme: 'square' }, secrets: ['k'], rawBody: body, now: NOW }),
    ).toThrow(/URL/);
    expect(
      verifyDelivery(input({ scheme: 'square' }, { secrets: ['k'], rawBody: body, headers })).scheme,
    ).toBe('square');
  });
});
