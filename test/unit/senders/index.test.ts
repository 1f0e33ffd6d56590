import { createHmac } from 'node:crypto';
import type { VerifyConfig } from '../../../functions/senders';
import {
  SENDER_SCHEMES,
  SignatureError,
  VerifyConfigError,
  verifyDelivery,
} from '../../../functions/senders';
import { BODY, expectConfigError, input, NOW_S, randomSecret } from './fixtures';

describe('verifyDelivery', () => {
  it('knows exactly the schemes the config file documents', () => {
    expect([...SENDER_SCHEMES].sort()).toEqual(
      [
        ...['github', 'hmac-sha256', 'none', 'shopify', 'slack', 'standard-webhooks', 'stripe', 'token'],
        ...['zoom', 'discord', 'asana', 'meta', 'sns', 'xero', 'hmac'],
      ].sort(),
    );
  });

  it('accepts none only with allowUnsigned: true', () => {
    expect(verifyDelivery(input({ scheme: 'none', allowUnsigned: true }))).toEqual({ scheme: 'none' });
    expect(expectConfigError(input({ scheme: 'none' })).message).toBe(
      'verify scheme none needs allowUnsigned: true',
    );
    expectConfigError(input({ scheme: 'none', allowUnsigned: false }));
  });

  it('refuses an unknown scheme, including Object.prototype names', () => {
    for (const scheme of ['sha1', 'constructor', '__proto__', 'toString', '']) {
      expectConfigError(input({ scheme } as unknown as VerifyConfig));
    }
  });

  it('refuses an invalid tolerance and an invalid clock rather than skipping the timestamp check', () => {
    const secret = randomSecret();
    const signature = createHmac('sha256', secret).update(`v0:${NOW_S}:`).update(BODY).digest('hex');
    const headers = { 'x-slack-signature': `v0=${signature}`, 'x-slack-request-timestamp': String(NOW_S) };
    expect(verifyDelivery(input({ scheme: 'slack' }, { secrets: [secret], headers })).scheme).toBe('slack');
    expectConfigError(input({ scheme: 'slack', toleranceSeconds: -1 }, { secrets: [secret], headers }));
    expectConfigError(
      input({ scheme: 'slack', toleranceSeconds: Number.NaN }, { secrets: [secret], headers }),
    );
    expectConfigError(input({ scheme: 'slack' }, { secrets: [secret], headers, now: new Date(Number.NaN) }));
  });

  it('raises errors that are DocrelayErrors, not retryable, with the problem+json detail', () => {
    const error = new SignatureError('SIGNATURE_MISSING', 'missing X-Hub-Signature-256 header');
    expect(error).toMatchObject({ name: 'SignatureError', code: 'SIGNATURE_MISSING', retryable: false });
    expect(JSON.parse(JSON.stringify(error))).toEqual({
      name: 'SignatureError',
      code: 'SIGNATURE_MISSING',
      retryable: false,
      detail: 'missing X-Hub-Signature-256 header',
    });
    expect(new VerifyConfigError('x')).toMatchObject({ name: 'VerifyConfigError', retryable: false });
  });
});
