import { createHmac, randomBytes } from 'node:crypto';
import { hmacValidator as HmacValidator } from '@adyen/api-library';
import { signDelivery, signedBody, verifyDelivery } from '../../../functions/senders';
import { expectConfigError, expectRefused, input, NOW } from './fixtures';

const key = randomBytes(32).toString('hex').toUpperCase();
const otherKey = randomBytes(32).toString('hex').toUpperCase();
const item = {
  additionalData: { authCode: '58747' },
  amount: { currency: 'EUR', value: 1130 },
  eventCode: 'AUTHORISATION',
  eventDate: '2026-03-01T12:00:00+01:00',
  merchantAccountCode: 'DocrelayECOM',
  merchantReference: 'order-1042',
  paymentMethod: 'visa',
  pspReference: 'QFQTPCQ8HXSKGK82',
  success: 'true',
};
const withSignature = (hmacKey: string, changes: Record<string, unknown> = {}) => {
  const hmacSignature = new HmacValidator().calculateHmac(item as never, hmacKey);
  return Buffer.from(
    JSON.stringify({
      live: 'false',
      notificationItems: [
        {
          NotificationRequestItem: {
            ...item,
            ...changes,
            additionalData: { ...item.additionalData, hmacSignature },
          },
        },
      ],
    }),
  );
};
const adyen = (rawBody: Buffer, fields: Parameters<typeof input>[1] = {}) =>
  input({ scheme: 'adyen', secret: 'docrelay/adyen' }, { secrets: [key], rawBody, ...fields });

describe('adyen scheme', () => {
  it("accepts items signed by Adyen's HmacValidator", () => {
    expect(verifyDelivery(adyen(withSignature(key)))).toEqual({
      scheme: 'adyen',
      signedDigest: expect.any(Buffer),
    });
  });

  it("signs each item so that Adyen's HmacValidator accepts it", () => {
    const unsigned = Buffer.from(
      JSON.stringify({ live: 'false', notificationItems: [{ NotificationRequestItem: item }] }),
    );
    const rawBody = signedBody({ config: { scheme: 'adyen' }, secrets: [key], rawBody: unsigned, now: NOW });
    expect(signDelivery({ config: { scheme: 'adyen' }, secrets: [key], rawBody, now: NOW })).toEqual({});
    const signedItem = JSON.parse(rawBody.toString()).notificationItems[0].NotificationRequestItem;
    expect(new HmacValidator().validateHMAC(signedItem, key)).toBe(true);
    expect(verifyDelivery(adyen(rawBody)).scheme).toBe('adyen');
  });

  it('accepts the new key during a rotation, and the HmacSignature header of body-signed webhooks', () => {
    expect(verifyDelivery(adyen(withSignature(otherKey), { secrets: [key, otherKey] })).scheme).toBe('adyen');
    const body = Buffer.from('{"type":"balancePlatform.accountHolder.created","data":{"id":"AH1"}}');
    const header = createHmac('sha256', Buffer.from(key, 'hex')).update(body).digest('base64');
    expect(new HmacValidator().validateHMACSignature(key, header, body.toString())).toBe(true);
    expect(verifyDelivery(adyen(body, { headers: { hmacsignature: header } })).scheme).toBe('adyen');
    expectRefused(
      adyen(Buffer.from(`${body} `), { headers: { hmacsignature: header } }),
      'SIGNATURE_INVALID',
    );
  });

  it('refuses another key, a changed signed field, and an item without a signature', () => {
    expectRefused(adyen(withSignature(otherKey)), 'SIGNATURE_INVALID');
    const signed = JSON.parse(withSignature(key).toString());
    signed.notificationItems[0].NotificationRequestItem.amount.value = 1;
    expectRefused(adyen(Buffer.from(JSON.stringify(signed))), 'SIGNATURE_INVALID');
    delete signed.notificationItems[0].NotificationRequestItem.additionalData.hmacSignature;
    expectRefused(adyen(Buffer.from(JSON.stringify(signed))), 'SIGNATURE_MISSING');
    expectRefused(adyen(Buffer.from('{"live":"false"}')), 'SIGNATURE_MISSING');
    expectRefused(adyen(Buffer.from('<xml/>')), 'SIGNATURE_MISSING');
  });

  it('refuses a secret that is not a hex HMAC key', () => {
    expectConfigError(adyen(withSignature(key), { secrets: ['not hex'] }));
  });
});
