import { verifyDelivery } from '../../../functions/senders';
import { expectRefused, input, randomSecret } from './fixtures';

// GitLab's docs: the webhook's secret token, verbatim, in X-Gitlab-Token.
const token = randomSecret();
const other = randomSecret();
const gitlab = (headers: Record<string, string>, fields: Parameters<typeof input>[1] = {}) =>
  input({ scheme: 'gitlab', secret: 'docrelay/gitlab' }, { secrets: [token], headers, ...fields });

describe('gitlab scheme', () => {
  it('accepts the secret token and reads Idempotency-Key', () => {
    const result = verifyDelivery(
      gitlab({ 'x-gitlab-token': token, 'x-gitlab-event-uuid': 'u-9', 'idempotency-key': 'u-1' }),
    );
    expect(result).toEqual({ scheme: 'gitlab', deliveryId: 'u-1' });
    expect(verifyDelivery(gitlab({ 'x-gitlab-token': other }, { secrets: [token, other] })).scheme).toBe(
      'gitlab',
    );
  });

  it('refuses another token and a missing header', () => {
    expectRefused(gitlab({ 'x-gitlab-token': other }), 'SIGNATURE_INVALID');
    expectRefused(gitlab({ 'x-gitlab-token': `${token} ` }), 'SIGNATURE_INVALID');
    expectRefused(gitlab({}), 'SIGNATURE_MISSING');
  });
});
