import { createHmac } from 'node:crypto';
import { senderDeliveryId, signedBody, verifyDelivery } from '../../../functions/senders';
import { expectRefused, input, NOW, NOW_S, randomSecret } from './fixtures';

// Mailgun's docs: hex HMAC-SHA256 of timestamp + token with the webhook signing key, in the body.
const key = randomSecret();
const other = randomSecret();
const TOKEN = 'e0b5477167110d68991efc6b9f89f0a11066af27834600e123';
const sig = (k: string, t: number | string, token = TOKEN) =>
  createHmac('sha256', k).update(`${t}${token}`).digest('hex');
const jsonBody = (signature: Record<string, unknown>) =>
  Buffer.from(
    JSON.stringify({ signature, 'event-data': { event: 'delivered', id: 'CPgfbmQMTCKtHW6uIWtuVe' } }),
  );
const mailgun = (rawBody: Buffer, fields: Parameters<typeof input>[1] = {}) =>
  input({ scheme: 'mailgun', secret: 'docrelay/mailgun' }, { secrets: [key], rawBody, ...fields });
const config = { scheme: 'mailgun' as const };

describe('mailgun scheme', () => {
  it('accepts the signature in a JSON body and takes the signed token as the delivery id', () => {
    const body = jsonBody({ timestamp: String(NOW_S), token: TOKEN, signature: sig(key, NOW_S) });
    expect(verifyDelivery(mailgun(body))).toEqual({ scheme: 'mailgun', deliveryId: TOKEN, timestamp: NOW });
    expect(senderDeliveryId(config, { headers: {}, body: JSON.parse(body.toString()) })).toBe(TOKEN);
  });

  it("accepts a subaccount's parent-signature, a rotated key and a legacy form post", () => {
    const parent = jsonBody({
      timestamp: NOW_S,
      token: TOKEN,
      signature: sig(other, NOW_S),
      'parent-signature': sig(key, NOW_S),
    });
    expect(verifyDelivery(mailgun(parent)).scheme).toBe('mailgun');
    const rotated = jsonBody({ timestamp: String(NOW_S), token: TOKEN, signature: sig(other, NOW_S) });
    expect(verifyDelivery(mailgun(rotated, { secrets: [key, other] })).scheme).toBe('mailgun');
    const form = Buffer.from(
      `recipient=a%40b.c&event=delivered&timestamp=${NOW_S}&token=${TOKEN}&signature=${sig(key, NOW_S)}`,
    );
    expect(verifyDelivery(mailgun(form)).scheme).toBe('mailgun');
  });

  it('refuses another key, another token, a stale timestamp and a body without a signature', () => {
    expectRefused(
      mailgun(jsonBody({ timestamp: String(NOW_S), token: TOKEN, signature: sig(other, NOW_S) })),
      'SIGNATURE_INVALID',
    );
    expectRefused(
      mailgun(jsonBody({ timestamp: String(NOW_S), token: `${TOKEN}x`, signature: sig(key, NOW_S) })),
      'SIGNATURE_INVALID',
    );
    const old = NOW_S - 3601;
    expectRefused(
      mailgun(jsonBody({ timestamp: String(old), token: TOKEN, signature: sig(key, old) })),
      'TIMESTAMP_STALE',
    );
    expectRefused(mailgun(Buffer.from('{"event-data":{}}')), 'SIGNATURE_MISSING');
    expectRefused(
      mailgun(jsonBody({ timestamp: 'soon', token: TOKEN, signature: sig(key, 'soon') })),
      'SIGNATURE_MALFORMED',
    );
  });

  it('signs inside the body, for JSON and form payloads', () => {
    for (const payload of ['{"event-data":{"event":"opened"}}', 'event=opened&recipient=a%40b.c']) {
      const rawBody = signedBody({ config, secrets: [key], rawBody: Buffer.from(payload), now: NOW });
      expect(verifyDelivery(mailgun(rawBody)).scheme).toBe('mailgun');
    }
  });
});
