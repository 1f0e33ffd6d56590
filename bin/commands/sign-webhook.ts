/**
 * Signing a webhook as its sender would, for `docrelay send`: the signature headers of every scheme that
 * functions/verify checks, over the exact bytes that will be posted, plus the sender's usual delivery headers.
 * The mirror image of functions/verify; test/unit/cli checks each scheme against verifyDelivery.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { VerifyConfig } from '../../functions/verify';

/** What signing one delivery needs. */
export interface SignInput {
  /** The integration's verify block. */
  readonly config: VerifyConfig;
  /** Secret VALUES in config order; the first one signs (during a rotation, list the new secret first). */
  readonly secrets: readonly string[];
  /** The bytes that will be posted, exactly. */
  readonly rawBody: Buffer;
  /** The signing time (timestamped schemes). */
  readonly now: Date;
  /** The sender's delivery id, for schemes that carry one in a header; a new one otherwise. */
  readonly deliveryId?: string;
  /** New ids. @default randomUUID */
  readonly newId?: () => string;
}

/** A delivery `send` cannot sign; the message says why (never a secret value). */
export class SigningError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SigningError';
  }
}

/** The header each scheme's sender puts its delivery id in (absent: the id comes from the body). */
export const DELIVERY_ID_HEADERS: Readonly<Record<VerifyConfig['scheme'], string | undefined>> = {
  github: 'x-github-delivery',
  stripe: undefined,
  shopify: 'x-shopify-webhook-id',
  slack: undefined,
  'standard-webhooks': 'webhook-id',
  'hmac-sha256': undefined,
  token: undefined,
  none: undefined,
};

const hmac = (key: string | Buffer, ...parts: ReadonlyArray<string | Buffer>): Buffer => {
  const mac = createHmac('sha256', key);
  for (const part of parts) mac.update(part);
  return mac.digest();
};

const unixSeconds = (now: Date): string => String(Math.floor(now.getTime() / 1000));

/** Headers (lower-case names) that make the delivery pass its integration's verification. */
export function signWebhook(input: SignInput): Record<string, string> {
  const { config, rawBody, now } = input;
  const newId = input.newId ?? randomUUID;
  const secret = (): string => {
    const first = input.secrets[0];
    if (first === undefined || first === '') {
      throw new SigningError(`verify scheme ${config.scheme} needs a secret to sign with`);
    }
    return first;
  };
  switch (config.scheme) {
    case 'github':
      return {
        'x-hub-signature-256': `sha256=${hmac(secret(), rawBody).toString('hex')}`,
        'x-github-delivery': input.deliveryId ?? newId(),
        'x-github-event': guessGithubEvent(rawBody),
      };
    case 'stripe': {
      const t = unixSeconds(now);
      return { 'stripe-signature': `t=${t},v1=${hmac(secret(), t, '.', rawBody).toString('hex')}` };
    }
    case 'shopify':
      return {
        'x-shopify-hmac-sha256': hmac(secret(), rawBody).toString('base64'),
        'x-shopify-webhook-id': input.deliveryId ?? newId(),
        'x-shopify-triggered-at': now.toISOString(),
      };
    case 'slack': {
      const t = unixSeconds(now);
      return {
        'x-slack-request-timestamp': t,
        'x-slack-signature': `v0=${hmac(secret(), 'v0:', t, ':', rawBody).toString('hex')}`,
      };
    }
    case 'standard-webhooks': {
      const id = input.deliveryId ?? `msg_${newId().replace(/-/g, '')}`;
      const t = unixSeconds(now);
      const key = standardWebhooksKey(secret());
      return {
        'webhook-id': id,
        'webhook-timestamp': t,
        'webhook-signature': `v1,${hmac(key, id, '.', t, '.', rawBody).toString('base64')}`,
      };
    }
    case 'hmac-sha256': {
      const header = config.header?.trim().toLowerCase();
      if (header === undefined || header === '') {
        throw new SigningError('verify scheme hmac-sha256 needs a header');
      }
      const digest = hmac(secret(), rawBody);
      return {
        [header]: `${config.prefix ?? ''}${digest.toString(config.encoding === 'base64' ? 'base64' : 'hex')}`,
      };
    }
    case 'token': {
      const header = config.header?.trim().toLowerCase() || 'authorization';
      return { [header]: header === 'authorization' ? `Bearer ${secret()}` : secret() };
    }
    case 'none':
      return {};
    default: {
      const unknown: never = config.scheme;
      throw new SigningError(`unknown verify scheme ${String(unknown)}`);
    }
  }
}

/** The HMAC key of a Standard Webhooks secret (`whsec_` + base64, or bare base64 as the library allows). */
function standardWebhooksKey(secret: string): Buffer {
  if (secret.startsWith('whpk_') || secret.startsWith('whsk_')) {
    // v1a: the receiver holds the sender's public key; only the sender's private key can sign.
    throw new SigningError(
      'this integration verifies ed25519 (v1a) signatures with the sender public key: send cannot sign without the private key (sign with the sender library)',
    );
  }
  const body = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(body) || body === '') {
    throw new SigningError('the standard-webhooks secret is not a whsec_ base64 secret');
  }
  return Buffer.from(body, 'base64');
}

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
