import { randomBytes } from 'node:crypto';
import { isObject, missingInBody, ownField, parseJsonObject } from './common/body-json';
import { anyHmacMatches, hmacSha256 } from './common/constant-time';
import { decodeHex } from './common/encoding';
import { SignatureError, SigningError } from './common/errors';
import {
  assertWithinTolerance,
  parseUnixSeconds,
  requireSecrets,
  toleranceOf,
  toleranceOption,
} from './common/headers';
import { hexDevSecret, signingSecret, unixSeconds } from './common/signing';
import type { SenderScheme } from './types';

/**
 * Mailgun asks receivers not to be "too aggressive" with the timestamp check, as its own processing can
 * delay a delivery: an hour by default.
 */
const TOLERANCE_SECONDS = 3600;
/** Mailgun's tokens are 50 characters; a much longer one is not Mailgun's. */
const MAX_TOKEN_LENGTH = 256;

interface BodySignature {
  readonly timestamp: string;
  readonly token: string;
  /** The signature, and the parent account's for an event on a subaccount. */
  readonly signatures: readonly string[];
}

/** A field that is text (or, for the timestamp, a JSON number written as text). */
const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;

/**
 * The signature object of the body: `signature: { timestamp, token, signature[, parent-signature] }` in JSON
 * webhooks, or the `timestamp`, `token` and `signature` fields of a legacy form post.
 */
function bodySignature(rawBody: Buffer): BodySignature {
  const json = parseJsonObject(rawBody);
  let fields: { timestamp?: string; token?: string; signatures: string[] };
  if (json !== undefined) {
    const signature = ownField(json, 'signature');
    fields = {
      timestamp: text(ownField(signature, 'timestamp')),
      token: text(ownField(signature, 'token')),
      signatures: ['signature', 'parent-signature'].flatMap((key) => text(ownField(signature, key)) ?? []),
    };
  } else {
    const form = new URLSearchParams(rawBody.toString('utf8'));
    fields = {
      timestamp: form.get('timestamp') ?? undefined,
      token: form.get('token') ?? undefined,
      signatures: form.getAll('signature').slice(0, 2),
    };
  }
  const { timestamp, token, signatures } = fields;
  if (timestamp === undefined || token === undefined || signatures.length === 0) {
    throw missingInBody('Mailgun signature (timestamp, token and signature)');
  }
  if (token === '' || token.length > MAX_TOKEN_LENGTH) {
    throw new SignatureError('SIGNATURE_MALFORMED', 'the Mailgun token is empty or too long');
  }
  return { timestamp, token, signatures };
}

/**
 * Mailgun: the signature is in the body (`signature`, or `parent-signature` with the parent account's key),
 * a hex HMAC-SHA256 over timestamp + token, the timestamp within the tolerance. It does not cover the event
 * data, so a replayed token is caught only by deduplication: the delivery id is the signed `signature.token`.
 */
export const mailgun: SenderScheme<'mailgun'> = {
  name: 'mailgun',
  takesSecret: true,
  options: { toleranceSeconds: toleranceOption(TOLERANCE_SECONDS) },
  secretHeaders: [],
  // Mailgun private API keys pasted where a secret NAME belongs.
  secretValuePrefixes: ['key-'],
  deliveryId: { bodyPath: ['signature', 'token'] },

  devSecret: hexDevSecret,

  verify({ rawBody, secrets, config, now }) {
    const keys = requireSecrets(secrets, 'mailgun');
    const tolerance = toleranceOf(config.toleranceSeconds, TOLERANCE_SECONDS);
    const { timestamp, token, signatures } = bodySignature(rawBody);
    const seconds = parseUnixSeconds(timestamp, 'the Mailgun timestamp');
    const decoded = signatures.flatMap((signature) => {
      const digest = decodeHex(signature);
      return digest?.length === 32 ? [digest] : [];
    });
    if (!anyHmacMatches(keys, [timestamp, token], decoded)) {
      throw new SignatureError('SIGNATURE_INVALID', 'the Mailgun signature does not match its token');
    }
    assertWithinTolerance(seconds, now, tolerance);
    return { scheme: 'mailgun', deliveryId: token, timestamp: new Date(seconds * 1000) };
  },

  sign() {
    // The signature is written into the body by signBody.
    return {};
  },

  signBody(input) {
    const timestamp = unixSeconds(input.now);
    const token = input.newId?.() ?? randomBytes(25).toString('hex');
    const signature = hmacSha256(signingSecret(input), [timestamp, token]).toString('hex');
    const json = parseJsonObject(input.rawBody);
    if (json !== undefined) {
      const event = isObject(json['event-data']) ? json : { 'event-data': json };
      return Buffer.from(JSON.stringify({ ...event, signature: { timestamp, token, signature } }));
    }
    const bodyText = input.rawBody.toString('utf8');
    if (/^\s*[[{]/.test(bodyText)) throw new SigningError('a Mailgun payload is a JSON object or a form');
    const form = new URLSearchParams(bodyText);
    form.set('timestamp', timestamp);
    form.set('token', token);
    form.set('signature', signature);
    return Buffer.from(form.toString());
  },
};
