import { createHmac } from 'node:crypto';
import { signDelivery, signedBody, verifyDelivery } from '../../../functions/senders';
import { expectRefused, input, NOW, randomSecret } from './fixtures';

// Linear's docs: hex HMAC-SHA256 of the raw body in Linear-Signature; webhookTimestamp (ms) within a minute.
const secret = `lin_wh_${randomSecret()}`;
const other = `lin_wh_${randomSecret()}`;
const bodyAt = (ms: number) =>
  Buffer.from(JSON.stringify({ action: 'create', type: 'Issue', data: { id: 'i1' }, webhookTimestamp: ms }));
const BODY = bodyAt(NOW.getTime());
const sign = (key: string, body = BODY) => createHmac('sha256', key).update(body).digest('hex');
const linear = (headers: Record<string, string>, fields: Parameters<typeof input>[1] = {}) =>
  input(
    { scheme: 'linear', secret: 'docrelay/linear' },
    { secrets: [secret], rawBody: BODY, headers, ...fields },
  );

describe('linear scheme', () => {
  it('accepts the signature and reads Linear-Delivery, with the body timestamp', () => {
    expect(verifyDelivery(linear({ 'linear-signature': sign(secret), 'linear-delivery': 'd-1' }))).toEqual({
      scheme: 'linear',
      deliveryId: 'd-1',
      timestamp: NOW,
      bodyMac: Buffer.from(sign(secret), 'hex'),
    });
    expect(
      verifyDelivery(linear({ 'linear-signature': sign(other) }, { secrets: [secret, other] })).scheme,
    ).toBe('linear');
  });

  it('refuses another secret, another body, a stale webhookTimestamp and a missing header', () => {
    expectRefused(linear({ 'linear-signature': sign(other) }), 'SIGNATURE_INVALID');
    expectRefused(
      linear({ 'linear-signature': sign(secret) }, { rawBody: bodyAt(NOW.getTime() + 1) }),
      'SIGNATURE_INVALID',
    );
    const stale = bodyAt(NOW.getTime() - 61_000);
    expectRefused(linear({ 'linear-signature': sign(secret, stale) }, { rawBody: stale }), 'TIMESTAMP_STALE');
    const untimed = Buffer.from('{"action":"create"}');
    expectRefused(
      linear({ 'linear-signature': sign(secret, untimed) }, { rawBody: untimed }),
      'SIGNATURE_MALFORMED',
    );
    expectRefused(linear({}), 'SIGNATURE_MISSING');
  });

  it('signs a body stamped with the signing time', () => {
    const sign = {
      config: { scheme: 'linear' as const },
      secrets: [secret],
      rawBody: Buffer.from('{"type":"Issue"}'),
      now: NOW,
    };
    const rawBody = signedBody(sign);
    expect(JSON.parse(rawBody.toString()).webhookTimestamp).toBe(NOW.getTime());
    const headers = signDelivery({ ...sign, rawBody });
    expect(verifyDelivery(linear(headers, { rawBody })).scheme).toBe('linear');
  });
});
