import { createHmac } from 'node:crypto';
import { verifyDelivery } from '../../../functions/senders';
import { BODY, expectRefused, input, RESERIALISED, randomSecret, tamper } from './fixtures';

// Shopify documents no signing helper for Node: its docs compute HMAC-SHA256 of the raw body with the app's
// client secret, base64-encoded, and compare it with X-Shopify-Hmac-Sha256.
const shopifySign = (secret: string, body: Buffer): string =>
  createHmac('sha256', secret).update(body).digest('base64');

const secret = randomSecret('shpss_');
const otherSecret = randomSecret('shpss_');
const shopify = (headers: Record<string, string>, fields: { secrets?: string[]; rawBody?: Buffer } = {}) =>
  input({ scheme: 'shopify', secret: 'docrelay/shopify' }, { secrets: [secret], headers, ...fields });

describe('shopify scheme', () => {
  it('accepts a base64 HMAC of the raw body and returns X-Shopify-Webhook-Id as the delivery id', () => {
    const result = verifyDelivery(
      shopify({
        'x-shopify-hmac-sha256': shopifySign(secret, BODY),
        'x-shopify-event-id': 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
        'x-shopify-webhook-id': '0d0c2e70-9c45-4bd4-b0f5-4d6d5a9a9f53',
        'x-shopify-topic': 'orders/create',
      }),
    );
    expect(result).toEqual({
      scheme: 'shopify',
      deliveryId: '0d0c2e70-9c45-4bd4-b0f5-4d6d5a9a9f53',
      bodyMac: Buffer.from(shopifySign(secret, BODY), 'base64'),
    });
  });

  it('refuses another secret, a tampered body and a re-serialised body', () => {
    expectRefused(shopify({ 'x-shopify-hmac-sha256': shopifySign(otherSecret, BODY) }), 'SIGNATURE_INVALID');
    expectRefused(
      shopify({ 'x-shopify-hmac-sha256': shopifySign(secret, BODY) }, { rawBody: tamper(BODY, 0) }),
      'SIGNATURE_INVALID',
    );
    expectRefused(
      shopify({ 'x-shopify-hmac-sha256': shopifySign(secret, BODY) }, { rawBody: RESERIALISED }),
      'SIGNATURE_INVALID',
      [shopifySign(secret, RESERIALISED)],
    );
  });

  it('accepts the second secret during a rotation', () => {
    const headers = { 'x-shopify-hmac-sha256': shopifySign(otherSecret, BODY) };
    expect(verifyDelivery(shopify(headers, { secrets: [secret, otherSecret] })).scheme).toBe('shopify');
  });

  it('refuses a missing header', () => {
    expect(expectRefused(shopify({}), 'SIGNATURE_MISSING').detail).toBe(
      'missing X-Shopify-Hmac-Sha256 header',
    );
  });

  it.each([
    ['hex instead of base64', () => createHmac('sha256', secret).update(BODY).digest('hex')],
    ['base64 without padding', () => shopifySign(secret, BODY).replace(/=+$/, '')],
    ['base64url characters', () => `-_${shopifySign(secret, BODY).slice(2)}`],
    ['a truncated digest', () => Buffer.alloc(31).toString('base64')],
    ['not base64 at all', () => '!!!not base64!!!'],
    ['a value over 8 KB', () => 'A'.repeat(8200)],
  ])('refuses a malformed header: %s', (_, value) => {
    expectRefused(shopify({ 'x-shopify-hmac-sha256': value() }), 'SIGNATURE_MALFORMED');
  });
});
