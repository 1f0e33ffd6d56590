import { randomUUID } from 'node:crypto';
import { stringsEqual } from './common/constant-time';
import { SignatureError } from './common/errors';
import { readHeader, requireHeader, requireSecrets } from './common/headers';
import { hexDevSecret, signingSecret } from './common/signing';
import type { SenderScheme } from './types';

const TOKEN = 'x-gitlab-token';
const DELIVERY = 'x-gitlab-event-uuid';

/**
 * GitLab: the webhook's secret token, verbatim, in `X-Gitlab-Token`. It proves only that the sender knows
 * the token: GitLab signs neither the body nor a timestamp. The delivery id is `X-Gitlab-Event-UUID`.
 */
export const gitlab: SenderScheme<'gitlab'> = {
  name: 'gitlab',
  takesSecret: true,
  options: {},
  secretHeaders: [TOKEN],
  // Personal, project and group access tokens pasted where a secret NAME belongs.
  secretValuePrefixes: ['glpat-'],
  deliveryId: { header: DELIVERY, signed: false },

  devSecret: hexDevSecret,

  verify({ headers, secrets }) {
    const tokens = requireSecrets(secrets, 'gitlab');
    const presented = requireHeader(headers, TOKEN, 'X-Gitlab-Token');
    // Compare against every configured token so which one matched (rotation) is not timed.
    let matched = false;
    for (const candidate of tokens) matched = stringsEqual(presented, candidate) || matched;
    if (!matched) throw new SignatureError('SIGNATURE_INVALID', 'X-Gitlab-Token is not valid');
    return { scheme: 'gitlab', deliveryId: readHeader(headers, DELIVERY, 'X-Gitlab-Event-UUID') };
  },

  sign(input) {
    return {
      [TOKEN]: signingSecret(input),
      [DELIVERY]: input.deliveryId ?? (input.newId ?? randomUUID)(),
      'x-gitlab-event': 'Push Hook',
    };
  },
};
