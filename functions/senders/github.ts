import { randomUUID } from 'node:crypto';
import { anyHmacMatches, hmacSha256 } from './common/constant-time';
import { decodeHex } from './common/encoding';
import { SignatureError } from './common/errors';
import { readHeader, requireHeader, requireSecrets } from './common/headers';
import { hexDevSecret, signingSecret } from './common/signing';
import type { SenderScheme } from './types';

const PREFIX = 'sha256=';
const SIGNATURE = 'x-hub-signature-256';
const DELIVERY = 'x-github-delivery';

/** GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`; delivery id from X-GitHub-Delivery. */
export const github: SenderScheme<'github'> = {
  name: 'github',
  takesSecret: true,
  options: {},
  // x-hub-signature is the legacy SHA-1 signature GitHub still sends beside the SHA-256 one.
  secretHeaders: [SIGNATURE, 'x-hub-signature'],
  secretValuePrefixes: [],
  // Not signed: a replay may carry any id (issue 14); a forged id still needs a valid signature.
  deliveryId: { header: DELIVERY, signed: false },

  devSecret: hexDevSecret,

  verify({ rawBody, headers, secrets }) {
    const keys = requireSecrets(secrets, 'github');
    const header = requireHeader(headers, SIGNATURE, 'X-Hub-Signature-256');
    const signature = header.startsWith(PREFIX) ? decodeHex(header.slice(PREFIX.length)) : undefined;
    if (signature?.length !== 32) {
      throw new SignatureError(
        'SIGNATURE_MALFORMED',
        'X-Hub-Signature-256 header is not sha256=<64 hex digits>',
      );
    }
    if (!anyHmacMatches(keys, [rawBody], [signature])) {
      throw new SignatureError('SIGNATURE_INVALID', 'X-Hub-Signature-256 does not match the body');
    }
    return {
      scheme: 'github',
      deliveryId: readHeader(headers, DELIVERY, 'X-GitHub-Delivery'),
      bodyMac: signature,
    };
  },

  sign(input) {
    return {
      [SIGNATURE]: `${PREFIX}${hmacSha256(signingSecret(input), [input.rawBody]).toString('hex')}`,
      [DELIVERY]: input.deliveryId ?? (input.newId ?? randomUUID)(),
      'x-github-event': guessGithubEvent(input.rawBody),
    };
  },
};

/** GitHub names the event in X-GitHub-Event; guessed from the payload's shape (override with --header). */
function guessGithubEvent(rawBody: Buffer): string {
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return 'ping';
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'ping';
  const has = (key: string): boolean => Object.hasOwn(body, key);
  if (has('zen') && has('hook_id')) return 'ping';
  if (has('commits') && has('ref')) return 'push';
  const byKey: ReadonlyArray<readonly [string, string]> = [
    ['release', 'release'],
    ['pull_request', 'pull_request'],
    ['issue', has('comment') ? 'issue_comment' : 'issues'],
    ['workflow_run', 'workflow_run'],
    ['workflow_job', 'workflow_job'],
    ['check_run', 'check_run'],
    ['check_suite', 'check_suite'],
    ['deployment_status', 'deployment_status'],
    ['deployment', 'deployment'],
    ['discussion', 'discussion'],
  ];
  return byKey.find(([key]) => has(key))?.[1] ?? 'ping';
}
