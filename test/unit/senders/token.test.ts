import { verifyDelivery } from '../../../functions/senders';
import { expectConfigError, expectRefused, input, randomSecret } from './fixtures';

const token = randomSecret();
const nextToken = randomSecret();

const bearer = (headers: Record<string, string>, secrets = [token]) =>
  input({ scheme: 'token', secret: 'docrelay/token' }, { secrets, headers });
const custom = (headers: Record<string, string>, secrets = [token]) =>
  input({ scheme: 'token', header: 'X-Webhook-Token' }, { secrets, headers });

describe('token scheme', () => {
  it('accepts Authorization: Bearer <secret>, with the scheme in any case', () => {
    expect(verifyDelivery(bearer({ authorization: `Bearer ${token}` }))).toEqual({ scheme: 'token' });
    expect(verifyDelivery(bearer({ authorization: `bearer ${token}` })).scheme).toBe('token');
  });

  it('refuses a wrong token, a token with extra characters and a prefix of the token', () => {
    expectRefused(bearer({ authorization: `Bearer ${nextToken}` }), 'SIGNATURE_INVALID');
    expectRefused(bearer({ authorization: `Bearer ${token}x` }), 'SIGNATURE_INVALID');
    expectRefused(bearer({ authorization: `Bearer ${token.slice(0, -1)}` }), 'SIGNATURE_INVALID');
  });

  it('refuses an Authorization header that is not a Bearer token', () => {
    expectRefused(bearer({ authorization: token }), 'SIGNATURE_MALFORMED');
    expectRefused(
      bearer({ authorization: `Basic ${Buffer.from(`u:${token}`).toString('base64')}` }),
      'SIGNATURE_MALFORMED',
    );
    expectRefused(bearer({ authorization: 'Bearer ' }), 'SIGNATURE_MALFORMED');
  });

  it('refuses a missing Authorization header', () => {
    expect(expectRefused(bearer({ 'x-webhook-token': token }), 'SIGNATURE_MISSING').detail).toBe(
      'missing Authorization header',
    );
  });

  it('takes the whole value of a custom header as the token', () => {
    expect(verifyDelivery(custom({ 'x-webhook-token': token })).scheme).toBe('token');
    expectRefused(custom({ 'x-webhook-token': `Bearer ${token}` }), 'SIGNATURE_INVALID');
    expectRefused(custom({ authorization: `Bearer ${token}` }), 'SIGNATURE_MISSING');
  });

  it('accepts either token during a rotation', () => {
    expect(verifyDelivery(bearer({ authorization: `Bearer ${nextToken}` }, [token, nextToken])).scheme).toBe(
      'token',
    );
    expect(verifyDelivery(custom({ 'x-webhook-token': nextToken }, [token, nextToken])).scheme).toBe('token');
  });

  it('refuses a header over 8 KB and a configuration without a token', () => {
    expectRefused(bearer({ authorization: `Bearer ${'t'.repeat(9000)}` }), 'SIGNATURE_MALFORMED');
    expectConfigError(bearer({ authorization: `Bearer ${token}` }, []));
    expectConfigError(input({ scheme: 'token', header: '' }, { secrets: [token] }));
  });
});
