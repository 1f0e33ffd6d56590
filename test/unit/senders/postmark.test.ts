import { verifyDelivery } from '../../../functions/senders';
import { expectConfigError, expectRefused, input, randomSecret } from './fixtures';

// Postmark's docs: Basic auth credentials written into the webhook URL, sent as Authorization: Basic.
const pair = `postmark:${randomSecret()}`;
const other = `postmark:${randomSecret()}`;
const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;
const postmark = (headers: Record<string, string>, fields: Parameters<typeof input>[1] = {}) =>
  input({ scheme: 'postmark', secret: 'docrelay/postmark' }, { secrets: [pair], headers, ...fields });

describe('postmark scheme', () => {
  it('accepts the Basic credentials, and the new pair during a rotation', () => {
    expect(verifyDelivery(postmark({ authorization: basic(pair) }))).toEqual({ scheme: 'postmark' });
    expect(verifyDelivery(postmark({ authorization: basic(other) }, { secrets: [pair, other] })).scheme).toBe(
      'postmark',
    );
  });

  it('refuses other credentials, another scheme and a missing header', () => {
    expectRefused(postmark({ authorization: basic(other) }), 'SIGNATURE_INVALID');
    expectRefused(postmark({ authorization: `Bearer ${pair}` }), 'SIGNATURE_MALFORMED');
    expectRefused(postmark({}), 'SIGNATURE_MISSING');
  });

  it('refuses a secret that is not user:password', () => {
    expectConfigError(postmark({ authorization: basic(pair) }, { secrets: ['no-colon'] }));
  });
});
