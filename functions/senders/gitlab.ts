import { randomUUID } from 'node:crypto';
import { stringsEqual } from './common/constant-time';
import { SignatureError } from './common/errors';
import { readHeader, requireHeader, requireSecrets, toleranceOption } from './common/headers';
import { hexDevSecret, signingSecret } from './common/signing';
import { standardWebhooks } from './standard-webhooks';
import type { SenderScheme } from './types';

const TOKEN = 'x-gitlab-token';
const SIGNATURE = 'webhook-signature';
const DELIVERY = 'idempotency-key';
/** GitLab's signing tokens are Standard Webhooks secrets; any other configured secret is a plain token. */
const SIGNING_PREFIX = 'whsec_';

/**
 * GitLab: a signing token (`whsec_...`) signs as Standard Webhooks does; a secret token sent verbatim in
 * `X-Gitlab-Token` proves only that the sender knows it, so with signing tokens only it is refused. Delivery
 * id: `Idempotency-Key`, signed only as `webhook-id`, so the body dedupes too. Details: docs/senders.md.
 */
export const gitlab: SenderScheme<'gitlab'> = {
  name: 'gitlab',
  takesSecret: true,
  options: { toleranceSeconds: toleranceOption() },
  secretHeaders: [TOKEN, SIGNATURE],
  // Personal, project and group access tokens, and signing tokens, pasted where a secret NAME belongs.
  secretValuePrefixes: ['glpat-', SIGNING_PREFIX],
  deliveryId: { header: DELIVERY, signed: false },

  devSecret: hexDevSecret,

  verify(input) {
    const secrets = requireSecrets(input.secrets, 'gitlab');
    const signing = secrets.filter((secret) => secret.startsWith(SIGNING_PREFIX));
    const tokens = secrets.filter((secret) => !secret.startsWith(SIGNING_PREFIX));
    const deliveryId = readHeader(input.headers, DELIVERY, 'Idempotency-Key');
    if (signing.length > 0 && (tokens.length === 0 || readHeader(input.headers, SIGNATURE, SIGNATURE))) {
      const { timestamp } = standardWebhooks.verify({ ...input, secrets: signing });
      return { scheme: 'gitlab', ...(deliveryId === undefined ? {} : { deliveryId }), timestamp };
    }
    const presented = requireHeader(input.headers, TOKEN, 'X-Gitlab-Token');
    // Compare against every configured token so which one matched (rotation) is not timed.
    let matched = false;
    for (const candidate of tokens) matched = stringsEqual(presented, candidate) || matched;
    if (!matched) throw new SignatureError('SIGNATURE_INVALID', 'X-Gitlab-Token is not valid');
    return { scheme: 'gitlab', ...(deliveryId === undefined ? {} : { deliveryId }) };
  },

  sign(input) {
    const secret = signingSecret(input);
    const id = input.deliveryId ?? (input.newId ?? randomUUID)();
    const credential = secret.startsWith(SIGNING_PREFIX)
      ? standardWebhooks.sign({ ...input, deliveryId: id })
      : { [TOKEN]: secret };
    return { ...credential, [DELIVERY]: id, 'x-gitlab-event-uuid': id, 'x-gitlab-event': 'Push Hook' };
  },
};
