import { randomUUID } from 'node:crypto';
import { assertHmacMatches, formatHmac, type HmacFormat, requireHmac } from './common/body-hmac';
import { requireJsonObject } from './common/body-json';
import { SignatureError, SigningError } from './common/errors';
import {
  assertWithinTolerance,
  readHeader,
  requireHeader,
  requireSecrets,
  toleranceOf,
  toleranceOption,
} from './common/headers';
import { signingSecret } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = 'linear-signature';
const DELIVERY = 'linear-delivery';
const FORMAT: HmacFormat = { algorithm: 'sha256', encoding: 'hex' };
/** Linear's docs reject a `webhookTimestamp` more than a minute from now. */
const TOLERANCE_SECONDS = 60;

/**
 * The body's `webhookTimestamp` (Unix milliseconds), read only after the signature matched: the timestamp
 * is signed because the body is.
 */
function webhookTimestamp(rawBody: Buffer): number {
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    body = undefined;
  }
  const value =
    typeof body === 'object' &&
    body !== null &&
    !Array.isArray(body) &&
    Object.hasOwn(body, 'webhookTimestamp')
      ? (body as { webhookTimestamp: unknown }).webhookTimestamp
      : undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new SignatureError('SIGNATURE_MALFORMED', 'the body has no numeric webhookTimestamp');
  }
  return value;
}

/**
 * Linear: `Linear-Signature: <hex HMAC-SHA256 of the raw body>` with the webhook's signing secret; the
 * body's `webhookTimestamp` (ms) within the tolerance (a minute, as Linear documents) both ways. The
 * delivery id is `Linear-Delivery`, not signed.
 */
export const linear: SenderScheme<'linear'> = {
  name: 'linear',
  takesSecret: true,
  options: { toleranceSeconds: toleranceOption(TOLERANCE_SECONDS) },
  secretHeaders: [SIGNATURE],
  // Linear API keys pasted where a secret NAME belongs (signing secrets are `lin_wh_...`).
  secretValuePrefixes: ['lin_wh_', 'lin_api_'],
  deliveryId: { header: DELIVERY, signed: false },

  devSecret: (random) => `lin_wh_${random.toString('hex')}`,

  verify({ rawBody, headers, secrets, config, now }) {
    const keys = requireSecrets(secrets, 'linear');
    const tolerance = toleranceOf(config.toleranceSeconds, TOLERANCE_SECONDS);
    const signature = requireHmac(
      requireHeader(headers, SIGNATURE, 'Linear-Signature'),
      FORMAT,
      'Linear-Signature',
    );
    assertHmacMatches(keys, [rawBody], [signature], FORMAT.algorithm, 'Linear-Signature');
    const millis = webhookTimestamp(rawBody);
    assertWithinTolerance(Math.floor(millis / 1000), now, tolerance);
    return {
      scheme: 'linear',
      deliveryId: readHeader(headers, DELIVERY, 'Linear-Delivery'),
      timestamp: new Date(millis),
      bodyMac: signature,
    };
  },

  signBody(input) {
    const body = requireJsonObject(input.rawBody, (message) => new SigningError(message), 'a Linear payload');
    return Buffer.from(JSON.stringify({ ...body, webhookTimestamp: input.now.getTime() }));
  },

  sign(input) {
    return {
      [SIGNATURE]: formatHmac(signingSecret(input), [input.rawBody], FORMAT),
      [DELIVERY]: input.deliveryId ?? (input.newId ?? randomUUID)(),
      'linear-event': 'Issue',
    };
  },
};
