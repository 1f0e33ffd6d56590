import { createHmac } from 'node:crypto';
import { verifyDelivery } from '../../../functions/senders';
import { BODY, expectRefused, input, NOW_S, randomSecret } from './fixtures';

// Calendly's docs: `t=<unix>,v1=<hex HMAC-SHA256 of "t.body">`, refused beyond three minutes.
const secret = randomSecret();
const other = randomSecret();
const v1 = (key: string, t: number, body = BODY) =>
  createHmac('sha256', key).update(`${t}.${body}`).digest('hex');
const calendly = (value: string | undefined, fields: Parameters<typeof input>[1] = {}) =>
  input(
    { scheme: 'calendly', secret: 'docrelay/calendly' },
    {
      secrets: [secret],
      headers: value === undefined ? {} : { 'calendly-webhook-signature': value },
      ...fields,
    },
  );

describe('calendly scheme', () => {
  it('accepts the signature, and the second key of a rotation', () => {
    expect(verifyDelivery(calendly(`t=${NOW_S},v1=${v1(secret, NOW_S)}`)).scheme).toBe('calendly');
    expect(
      verifyDelivery(calendly(`t=${NOW_S},v1=${v1(other, NOW_S)}`, { secrets: [secret, other] })).scheme,
    ).toBe('calendly');
  });

  it('refuses another key, another body, a stale timestamp and a missing header', () => {
    expectRefused(calendly(`t=${NOW_S},v1=${v1(other, NOW_S)}`), 'SIGNATURE_INVALID');
    expectRefused(
      calendly(`t=${NOW_S},v1=${v1(secret, NOW_S)}`, { rawBody: Buffer.from(`${BODY} `) }),
      'SIGNATURE_INVALID',
    );
    expectRefused(calendly(`t=${NOW_S - 181},v1=${v1(secret, NOW_S - 181)}`), 'TIMESTAMP_STALE');
    expectRefused(calendly(`t=${NOW_S + 1},v1=${v1(secret, NOW_S)}`), 'SIGNATURE_INVALID');
    expectRefused(calendly(undefined), 'SIGNATURE_MISSING');
    expectRefused(calendly(`v1=${v1(secret, NOW_S)}`), 'SIGNATURE_MALFORMED');
    expectRefused(calendly(`t=${NOW_S},t=${NOW_S},v1=${v1(secret, NOW_S)}`), 'SIGNATURE_MALFORMED');
  });
});
