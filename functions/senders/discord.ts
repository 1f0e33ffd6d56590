import { generateKeyPairSync, sign as signBytes, verify as verifySignature } from 'node:crypto';
import { decodeHex } from './common/encoding';
import { SignatureError } from './common/errors';
import { jsonAnswer, jsonObjectOf } from './common/handshake';
import {
  assertWithinTolerance,
  parseUnixSeconds,
  requireHeader,
  requireSecrets,
  toleranceOf,
  toleranceOption,
} from './common/headers';
import { privateKeyOf, publicKeyOf } from './common/public-key';
import { signingSecret, unixSeconds } from './common/signing';
import type { SenderScheme, VerifyInput } from './types';

const SIGNATURE = 'x-signature-ed25519';
const TIMESTAMP = 'x-signature-timestamp';

function verifyDiscord({ rawBody, headers, secrets, config, now }: VerifyInput) {
  const keys = requireSecrets(secrets, 'discord').map((secret) => publicKeyOf(secret, 'discord'));
  const tolerance = toleranceOf(config.toleranceSeconds);
  const signature = decodeHex(requireHeader(headers, SIGNATURE, 'X-Signature-Ed25519'));
  const timestamp = requireHeader(headers, TIMESTAMP, 'X-Signature-Timestamp');
  const seconds = parseUnixSeconds(timestamp, 'X-Signature-Timestamp');
  if (signature?.length !== 64) {
    throw new SignatureError('SIGNATURE_MALFORMED', 'X-Signature-Ed25519 header is not 128 hex digits');
  }
  const signed = Buffer.concat([Buffer.from(timestamp, 'utf8'), rawBody]);
  if (!keys.some((key) => verifySignature(null, signed, key, signature))) {
    throw new SignatureError('SIGNATURE_INVALID', 'X-Signature-Ed25519 does not match the body');
  }
  assertWithinTolerance(seconds, now, tolerance);
  return { scheme: 'discord', timestamp: new Date(seconds * 1000) };
}

/**
 * Discord interactions: `X-Signature-Ed25519` over `${X-Signature-Timestamp}${raw body}`, checked with the
 * app's public key (64 hex digits or PEM). A PING is verified, then answered `{"type":1}` with no job.
 * The delivery id is the body's `id`.
 */
export const discord: SenderScheme<'discord'> = {
  name: 'discord',
  takesSecret: true,
  options: { toleranceSeconds: toleranceOption() },
  secretHeaders: [SIGNATURE],
  secretValuePrefixes: [],
  deliveryId: { bodyField: 'id' },

  // A development key pair's private half: it verifies (its public key is derived) and `docrelay send` signs.
  devSecret: () =>
    generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),

  handshake(request) {
    if (jsonObjectOf(request.rawBody)?.type !== 1) return undefined;
    verifyDiscord(request);
    return jsonAnswer({ type: 1 });
  },

  verify: verifyDiscord,

  sign(input) {
    const key = privateKeyOf(signingSecret(input), 'discord');
    const t = unixSeconds(input.now);
    const signature = signBytes(null, Buffer.concat([Buffer.from(t, 'utf8'), input.rawBody]), key);
    return { [TIMESTAMP]: t, [SIGNATURE]: signature.toString('hex') };
  },
};
