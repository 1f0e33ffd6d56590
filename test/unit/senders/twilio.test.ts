import { createHash } from 'node:crypto';
import {
  getExpectedTwilioSignature,
  validateRequest,
  validateRequestWithBody,
} from 'twilio/lib/webhooks/webhooks';
import { signDelivery, verifyDelivery } from '../../../functions/senders';
import { expectRefused, input, randomSecret } from './fixtures';

const URL_ = 'https://hooks.example.com/v1/hooks/sms?tenant=acme';
const FORM =
  'ToCountry=US&Body=Hello+%26+welcome&From=%2B15005550006&MessageSid=SM1&To=%2B15005550001&NumMedia=0';
const params = Object.fromEntries(new URLSearchParams(FORM));
const token = randomSecret().slice(0, 32);
const otherToken = randomSecret().slice(0, 32);
const twilio = (headers: Record<string, string>, fields: Parameters<typeof input>[1] = {}) =>
  input(
    { scheme: 'twilio', secret: 'docrelay/twilio' },
    { secrets: [token], rawBody: Buffer.from(FORM), url: URL_, headers, ...fields },
  );

describe('twilio scheme', () => {
  it("accepts a form signed by twilio's own signature helper, with the idempotency token as delivery id", () => {
    const signature = getExpectedTwilioSignature(token, URL_, params);
    const result = verifyDelivery(
      twilio({ 'x-twilio-signature': signature, 'i-twilio-idempotency-token': 'idem-1' }),
    );
    expect(result).toEqual({ scheme: 'twilio', deliveryId: 'idem-1', signedDigest: expect.any(Buffer) });
  });

  it("signs as twilio's validateRequest expects", () => {
    const headers = signDelivery({
      config: { scheme: 'twilio' },
      secrets: [token],
      rawBody: Buffer.from(FORM),
      now: new Date(),
      url: URL_,
    });
    expect(validateRequest(token, headers['x-twilio-signature'] ?? '', URL_, params)).toBe(true);
    expect(headers['content-type']).toBe('application/x-www-form-urlencoded');
  });

  it('accepts repeated fields sorted as the library sorts them, and the URL with its default port', () => {
    const form = 'b=2&a=z&a=y&a=z';
    const signature = getExpectedTwilioSignature(
      token,
      'https://hooks.example.com:443/v1/hooks/sms?tenant=acme',
      {
        a: ['z', 'y', 'z'],
        b: '2',
      },
    );
    expect(
      verifyDelivery(twilio({ 'x-twilio-signature': signature }, { rawBody: Buffer.from(form) })).scheme,
    ).toBe('twilio');
  });

  it('accepts a JSON callback whose URL carries bodySHA256, as validateRequestWithBody does', () => {
    const body = '{"event":"call.completed","CallSid":"CA1"}';
    const url = `${URL_}&bodySHA256=${createHash('sha256').update(body).digest('hex')}`;
    const signature = getExpectedTwilioSignature(token, url, {});
    expect(validateRequestWithBody(token, signature, url, body)).toBe(true);
    const delivery = twilio({ 'x-twilio-signature': signature }, { rawBody: Buffer.from(body), url });
    expect(verifyDelivery(delivery).scheme).toBe('twilio');
    expectRefused({ ...delivery, rawBody: Buffer.from(`${body} `) }, 'SIGNATURE_INVALID');
  });

  it('accepts the secondary auth token during a rotation', () => {
    const signature = getExpectedTwilioSignature(otherToken, URL_, params);
    expect(
      verifyDelivery(twilio({ 'x-twilio-signature': signature }, { secrets: [token, otherToken] })).scheme,
    ).toBe('twilio');
  });

  it('refuses another token, another body, another URL and a missing header', () => {
    const signature = getExpectedTwilioSignature(token, URL_, params);
    expectRefused(
      twilio({ 'x-twilio-signature': getExpectedTwilioSignature(otherToken, URL_, params) }),
      'SIGNATURE_INVALID',
    );
    expectRefused(
      twilio({ 'x-twilio-signature': signature }, { rawBody: Buffer.from(`${FORM}&Extra=1`) }),
      'SIGNATURE_INVALID',
    );
    expectRefused(twilio({ 'x-twilio-signature': signature }, { url: `${URL_}x` }), 'SIGNATURE_INVALID');
    expect(expectRefused(twilio({}), 'SIGNATURE_MISSING').detail).toBe('missing X-Twilio-Signature header');
    expectRefused(twilio({ 'x-twilio-signature': 'abc' }), 'SIGNATURE_MALFORMED');
  });
});
