import { Webhook } from 'standardwebhooks';
import { verifyDelivery } from '../../../functions/senders';
import { BODY_TEXT, expectRefused, input, NOW, NOW_S } from './fixtures';

// Svix, Clerk and Resend deliver Standard Webhooks under svix-* headers; the standardwebhooks package signs.
const secret = `whsec_${Buffer.from('svix-test-secret-0123456789abcdef').toString('base64')}`;
const other = `whsec_${Buffer.from('svix-other-secret-0123456789abcde').toString('base64')}`;
const svixHeaders = (key: string, at = NOW) => {
  const signature = new Webhook(key).sign('msg_2Lh9', at, BODY_TEXT);
  return {
    'svix-id': 'msg_2Lh9',
    'svix-timestamp': String(Math.floor(at.getTime() / 1000)),
    'svix-signature': signature,
  };
};

describe.each(['svix', 'clerk', 'resend'] as const)(
  '%s scheme (Standard Webhooks under svix-* headers)',
  (scheme) => {
    const delivery = (headers: Record<string, string>, fields: Parameters<typeof input>[1] = {}) =>
      input({ scheme, secret: `docrelay/${scheme}` }, { secrets: [secret], headers, ...fields });

    it('accepts svix-* headers and the webhook-* spelling, with the signed id as delivery id', () => {
      expect(verifyDelivery(delivery(svixHeaders(secret)))).toEqual({
        scheme,
        deliveryId: 'msg_2Lh9',
        timestamp: new Date(NOW_S * 1000),
      });
      const h = svixHeaders(secret);
      const spec = {
        'webhook-id': h['svix-id'],
        'webhook-timestamp': h['svix-timestamp'],
        'webhook-signature': h['svix-signature'],
      };
      expect(verifyDelivery(delivery(spec)).scheme).toBe(scheme);
      expect(verifyDelivery(delivery(svixHeaders(other), { secrets: [secret, other] })).scheme).toBe(scheme);
    });

    it('refuses another secret, another body, a stale timestamp and a missing header', () => {
      expectRefused(delivery(svixHeaders(other)), 'SIGNATURE_INVALID');
      expectRefused(
        delivery(svixHeaders(secret), { rawBody: Buffer.from(`${BODY_TEXT} `) }),
        'SIGNATURE_INVALID',
      );
      expectRefused(delivery(svixHeaders(secret, new Date(NOW.getTime() - 301_000))), 'TIMESTAMP_STALE');
      const { 'svix-signature': _, ...unsigned } = svixHeaders(secret);
      expect(expectRefused(delivery(unsigned), 'SIGNATURE_MISSING').detail).toBe(
        'missing svix-signature header',
      );
    });
  },
);
