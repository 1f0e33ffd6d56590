import { createHmac } from 'node:crypto';
import type { VerifyConfig } from '../../../functions/senders';
import { verifyDelivery } from '../../../functions/senders';
import {
  BODY,
  expectConfigError,
  expectRefused,
  input,
  RESERIALISED,
  randomSecret,
  tamper,
} from './fixtures';

const secret = randomSecret();
const otherSecret = randomSecret();
const digest = (key: string, body: Buffer, encoding: 'hex' | 'base64') =>
  createHmac('sha256', key).update(body).digest(encoding);

const generic = (config: Omit<VerifyConfig, 'scheme'>, headers: Record<string, string>, fields = {}) =>
  input({ scheme: 'hmac-sha256', ...config }, { secrets: [secret], headers, ...fields });

describe('hmac-sha256 scheme', () => {
  it('accepts hex by default, reading the configured header case-insensitively', () => {
    const result = verifyDelivery(
      generic({ header: 'X-Signature' }, { 'x-signature': digest(secret, BODY, 'hex') }),
    );
    expect(result).toEqual({ scheme: 'hmac-sha256' });
  });

  it('accepts base64 when configured', () => {
    const config = { header: 'X-Signature', encoding: 'base64' as const };
    expect(verifyDelivery(generic(config, { 'x-signature': digest(secret, BODY, 'base64') })).scheme).toBe(
      'hmac-sha256',
    );
    expectRefused(generic(config, { 'x-signature': digest(secret, BODY, 'hex') }), 'SIGNATURE_MALFORMED');
  });

  it('strips a configured prefix, and requires the value to start with it', () => {
    const config = { header: 'X-Hub-Signature-256', prefix: 'sha256=' };
    const value = `sha256=${digest(secret, BODY, 'hex')}`;
    expect(verifyDelivery(generic(config, { 'x-hub-signature-256': value })).scheme).toBe('hmac-sha256');
    const error = expectRefused(
      generic(config, { 'x-hub-signature-256': digest(secret, BODY, 'hex') }),
      'SIGNATURE_MALFORMED',
    );
    expect(error.detail).toBe('X-Hub-Signature-256 header does not start with the configured prefix');
    expectRefused(
      generic(config, { 'x-hub-signature-256': `SHA256=${digest(secret, BODY, 'hex')}` }),
      'SIGNATURE_MALFORMED',
    );
  });

  it('refuses another secret, a tampered body and a re-serialised body', () => {
    const config = { header: 'x-signature' };
    expectRefused(generic(config, { 'x-signature': digest(otherSecret, BODY, 'hex') }), 'SIGNATURE_INVALID');
    expectRefused(
      generic(
        config,
        { 'x-signature': digest(secret, BODY, 'hex') },
        { rawBody: tamper(BODY, BODY.length - 1) },
      ),
      'SIGNATURE_INVALID',
    );
    expectRefused(
      generic(config, { 'x-signature': digest(secret, BODY, 'hex') }, { rawBody: RESERIALISED }),
      'SIGNATURE_INVALID',
      [digest(secret, RESERIALISED, 'hex')],
    );
  });

  it('accepts the second secret during a rotation', () => {
    const headers = { 'x-signature': digest(otherSecret, BODY, 'hex') };
    expect(
      verifyDelivery(generic({ header: 'x-signature' }, headers, { secrets: [secret, otherSecret] })).scheme,
    ).toBe('hmac-sha256');
  });

  it('refuses a missing header, naming it as configured', () => {
    expect(expectRefused(generic({ header: 'X-Signature' }, {}), 'SIGNATURE_MISSING').detail).toBe(
      'missing X-Signature header',
    );
  });

  it.each([
    ['non-hex', 'q'.repeat(64)],
    ['too short', 'ab'.repeat(16)],
    ['over 8 KB', 'ab'.repeat(5000)],
  ])('refuses a malformed value: %s', (_, value) => {
    expectRefused(generic({ header: 'x-signature' }, { 'x-signature': value }), 'SIGNATURE_MALFORMED');
  });

  it('refuses a configuration without a header or with an unknown encoding', () => {
    expectConfigError(generic({}, { 'x-signature': digest(secret, BODY, 'hex') }));
    expectConfigError(generic({ header: ' ' }, {}));
    expectConfigError(
      input({ scheme: 'hmac-sha256', header: 'x-signature', encoding: 'base32' } as unknown as VerifyConfig, {
        secrets: [secret],
      }),
    );
  });

  it('never reads a header name from Object.prototype', () => {
    expectRefused(generic({ header: 'constructor' }, {}), 'SIGNATURE_MISSING');
    expectRefused(generic({ header: '__proto__' }, {}), 'SIGNATURE_MISSING');
  });
});
