import { createPublicKey, type KeyObject, randomUUID, verify as verifySignature } from 'node:crypto';
import { anyHmacMatches, hmacSha256 } from './common/constant-time';
import { decodeBase64 } from './common/encoding';
import { SignatureError, SigningError, VerifyConfigError } from './common/errors';
import {
  assertWithinTolerance,
  MAX_SIGNATURES,
  parseUnixSeconds,
  readHeader,
  requireHeader,
  requireSecrets,
  toleranceOf,
  toleranceOption,
} from './common/headers';
import { signingSecret, unixSeconds } from './common/signing';
import type { SenderScheme } from './types';

/** The three headers of one spelling: `webhook-*` (the spec) or `svix-*` (Svix and the senders built on it). */
interface HeaderNames {
  readonly id: string;
  readonly timestamp: string;
  readonly signature: string;
}

const headerNames = (prefix: string): HeaderNames => ({
  id: `${prefix}-id`,
  timestamp: `${prefix}-timestamp`,
  signature: `${prefix}-signature`,
});

const WEBHOOK = headerNames('webhook');
const SVIX = headerNames('svix');

/**
 * At most this many v1a (ed25519) signatures of one header are tried, each against every whpk_ key over the
 * whole body: a sender signs with one key, two while it rotates.
 */
export const MAX_ED25519_SIGNATURES_TRIED = 4;

const SYMMETRIC_PREFIX = 'whsec_';
const PUBLIC_KEY_PREFIX = 'whpk_';
const PRIVATE_KEY_PREFIX = 'whsk_';

interface Keys {
  symmetric: Buffer[];
  publicKeys: KeyObject[];
}

/** Sorts the configured secrets into HMAC keys (whsec_, or bare base64 as the package allows) and ed25519 public keys (whpk_). */
function parseKeys(secrets: readonly string[]): Keys {
  const keys: Keys = { symmetric: [], publicKeys: [] };
  // Messages name the position only: a secret's value never enters an error.
  secrets.forEach((secret, index) => {
    if (secret.startsWith(PRIVATE_KEY_PREFIX)) {
      throw new VerifyConfigError(
        `standard-webhooks secret #${index + 1} is a whsk_ private key; configure the sender's whpk_ public key`,
      );
    }
    if (secret.startsWith(PUBLIC_KEY_PREFIX)) {
      const raw = decodeBase64(secret.slice(PUBLIC_KEY_PREFIX.length));
      if (raw?.length !== 32) {
        throw new VerifyConfigError(
          `standard-webhooks secret #${index + 1} is not a whpk_ base64 32-byte ed25519 public key`,
        );
      }
      try {
        keys.publicKeys.push(
          createPublicKey({
            key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') },
            format: 'jwk',
          }),
        );
      } catch {
        throw new VerifyConfigError(
          `standard-webhooks secret #${index + 1} is not a valid ed25519 public key`,
        );
      }
      return;
    }
    const body = secret.startsWith(SYMMETRIC_PREFIX) ? secret.slice(SYMMETRIC_PREFIX.length) : secret;
    const key = decodeBase64(body);
    if (key === undefined) {
      throw new VerifyConfigError(`standard-webhooks secret #${index + 1} is not a whsec_ base64 secret`);
    }
    keys.symmetric.push(key);
  });
  return keys;
}

/** ed25519 verification that answers false (never throws) for a signature or key OpenSSL rejects. */
function ed25519Verifies(message: Buffer, key: KeyObject, signature: Buffer): boolean {
  try {
    return verifySignature(null, message, key, signature);
  } catch {
    return false;
  }
}

/**
 * Standard Webhooks: `webhook-signature` lists `v1,<base64 HMAC-SHA256>` and `v1a,<base64 ed25519>` over
 * `${webhook-id}.${webhook-timestamp}.${body}`; any one matching is enough. The timestamp is checked first,
 * so a stale or unsigned request costs no signature work. The delivery id is the signed `webhook-id`.
 */
function standardWebhooksScheme<Name extends string>(
  name: Name,
  spellings: readonly [HeaderNames, ...HeaderNames[]],
): SenderScheme<Name> {
  const [main] = spellings;
  return {
    name,
    takesSecret: true,
    options: { toleranceSeconds: toleranceOption() },
    secretHeaders: spellings.map(({ signature }) => signature),
    secretValuePrefixes: [SYMMETRIC_PREFIX],
    deliveryId: { header: main.id, signed: true },

    devSecret: (random) => `${SYMMETRIC_PREFIX}${random.toString('base64')}`,

    verify({ rawBody, headers, secrets, config, now }) {
      const keys = parseKeys(requireSecrets(secrets, 'standard-webhooks'));
      const tolerance = toleranceOf(config.toleranceSeconds);
      // The first spelling whose id header is present; messages name the main spelling otherwise.
      const names = spellings.find(({ id }) => readHeader(headers, id, id) !== undefined) ?? main;
      const id = requireHeader(headers, names.id, names.id);
      const timestamp = requireHeader(headers, names.timestamp, names.timestamp);
      const header = requireHeader(headers, names.signature, names.signature);
      const seconds = parseUnixSeconds(timestamp, names.timestamp);
      assertWithinTolerance(seconds, now, tolerance);

      const entries = header.split(' ').filter((entry) => entry !== '');
      if (entries.length > MAX_SIGNATURES) {
        throw new SignatureError('SIGNATURE_MALFORMED', `${names.signature} header has too many signatures`);
      }
      const hmacs: Buffer[] = [];
      const ed25519: Buffer[] = [];
      let known = 0;
      for (const entry of entries) {
        const comma = entry.indexOf(',');
        const version = comma < 0 ? entry : entry.slice(0, comma);
        const signature = comma < 0 ? undefined : decodeBase64(entry.slice(comma + 1));
        // Unknown versions are skipped, as the spec asks, so senders can add schemes without breaking receivers.
        if (version === 'v1') {
          known += 1;
          if (signature?.length === 32) hmacs.push(signature);
        } else if (version === 'v1a') {
          known += 1;
          // Each ed25519 check runs over the whole body per key: only the first few are tried.
          if (signature?.length === 64 && ed25519.length < MAX_ED25519_SIGNATURES_TRIED)
            ed25519.push(signature);
        }
      }
      if (known === 0) {
        throw new SignatureError(
          'SIGNATURE_MALFORMED',
          `${names.signature} header has no v1 or v1a signature`,
        );
      }

      let matched = anyHmacMatches(keys.symmetric, [id, '.', timestamp, '.', rawBody], hmacs);
      if (!matched && ed25519.length > 0 && keys.publicKeys.length > 0) {
        // ed25519 is one-shot in node:crypto, so this is the one place the body is copied, and only when needed.
        const message = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), rawBody]);
        matched = keys.publicKeys.some((key) =>
          ed25519.some((signature) => ed25519Verifies(message, key, signature)),
        );
      }
      if (!matched) {
        throw new SignatureError('SIGNATURE_INVALID', `no ${names.signature} signature matches the body`);
      }
      return { scheme: name, deliveryId: id, timestamp: new Date(seconds * 1000) };
    },

    sign(input) {
      const id = input.deliveryId ?? `msg_${(input.newId ?? randomUUID)().replace(/-/g, '')}`;
      const t = unixSeconds(input.now);
      const key = signingKey(signingSecret(input));
      return {
        [main.id]: id,
        [main.timestamp]: t,
        [main.signature]: `v1,${hmacSha256(key, [id, '.', t, '.', input.rawBody]).toString('base64')}`,
      };
    },
  };
}

/** Standard Webhooks, as the spec names its headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`). */
export const standardWebhooks = standardWebhooksScheme('standard-webhooks', [WEBHOOK]);

/**
 * Svix, and the senders that deliver through it (Clerk, Resend): Standard Webhooks under `svix-id`,
 * `svix-timestamp` and `svix-signature`, or the `webhook-*` spelling, as the svix library accepts both.
 * The same verification under the sender's own name, so a config says which sender it expects.
 */
export const svix = standardWebhooksScheme('svix', [SVIX, WEBHOOK]);

/** Clerk: Svix-delivered Standard Webhooks (the signing secret is the endpoint's `whsec_...`). */
export const clerk = standardWebhooksScheme('clerk', [SVIX, WEBHOOK]);

/** Resend: Svix-delivered Standard Webhooks (the signing secret is the webhook's `whsec_...`). */
export const resend = standardWebhooksScheme('resend', [SVIX, WEBHOOK]);

/** The HMAC key of a Standard Webhooks secret (`whsec_` + base64, or bare base64 as the library allows). */
function signingKey(secret: string): Buffer {
  if (secret.startsWith(PUBLIC_KEY_PREFIX) || secret.startsWith(PRIVATE_KEY_PREFIX)) {
    // v1a: the receiver holds the sender's public key; only the sender's private key can sign.
    throw new SigningError(
      'this integration verifies ed25519 (v1a) signatures with the sender public key: send cannot sign without the private key (sign with the sender library)',
    );
  }
  const key = decodeBase64(
    secret.startsWith(SYMMETRIC_PREFIX) ? secret.slice(SYMMETRIC_PREFIX.length) : secret,
  );
  if (key === undefined) throw new SigningError('the standard-webhooks secret is not a whsec_ base64 secret');
  return key;
}
