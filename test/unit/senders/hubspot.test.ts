import { createHmac } from 'node:crypto';
import { verifyDelivery } from '../../../functions/senders';
import { BODY, expectConfigError, expectRefused, input, NOW, randomSecret } from './fixtures';

// HubSpot's docs (v3): base64 HMAC-SHA256 of method + URI + body + timestamp, URI with the listed escapes decoded.
const URL_ = 'https://hooks.example.com/v1/hooks/crm?portal=42&from=a%3Ab%40c';
const SIGNED_URI = 'https://hooks.example.com/v1/hooks/crm?portal=42&from=a:b@c';
const sign = (secret: string, timestamp: string, body = BODY, method = 'POST') =>
  createHmac('sha256', secret).update(`${method}${SIGNED_URI}${body}${timestamp}`).digest('base64');
const secret = randomSecret();
const other = randomSecret();
const ms = String(NOW.getTime());
const hubspot = (headers: Record<string, string>, fields: Parameters<typeof input>[1] = {}) =>
  input(
    { scheme: 'hubspot', secret: 'docrelay/hubspot' },
    { secrets: [secret], url: URL_, headers, ...fields },
  );
const signed = (signature: string, timestamp = ms) => ({
  'x-hubspot-signature-v3': signature,
  'x-hubspot-request-timestamp': timestamp,
});

describe('hubspot scheme', () => {
  it('accepts a v3 signature over method, decoded URI, body and timestamp', () => {
    expect(verifyDelivery(hubspot(signed(sign(secret, ms))))).toEqual({ scheme: 'hubspot', timestamp: NOW });
    expect(verifyDelivery(hubspot(signed(sign(other, ms)), { secrets: [secret, other] })).scheme).toBe(
      'hubspot',
    );
  });

  it('refuses another secret, body, method, a stale timestamp and missing headers', () => {
    expectRefused(hubspot(signed(sign(other, ms))), 'SIGNATURE_INVALID');
    expectRefused(
      hubspot(signed(sign(secret, ms)), { rawBody: Buffer.from(`${BODY} `) }),
      'SIGNATURE_INVALID',
    );
    expectRefused(hubspot(signed(sign(secret, ms)), { method: 'PUT' }), 'SIGNATURE_INVALID');
    const old = String(NOW.getTime() - 301_000);
    expectRefused(hubspot(signed(sign(secret, old), old)), 'TIMESTAMP_STALE');
    expectRefused(hubspot({ 'x-hubspot-request-timestamp': ms }), 'SIGNATURE_MISSING');
    expectRefused(hubspot({ 'x-hubspot-signature-v3': sign(secret, ms) }), 'SIGNATURE_MISSING');
    expectRefused(hubspot(signed(sign(secret, ms), '1.5')), 'SIGNATURE_MALFORMED');
    expectConfigError(hubspot(signed(sign(secret, ms)), { url: '' }));
  });
});
