import { anyHmacMatches, hmacSha256 } from './common/constant-time';
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
import { hexDevSecret, signingSecret, unixSeconds } from './common/signing';
import type { SenderScheme, VerifyInput } from './types';

const PREFIX = 'v0=';
const SIGNATURE = 'x-zm-signature';
const TIMESTAMP = 'x-zm-request-timestamp';
/** Zoom's plainToken is a short random string; anything long is not Zoom's. */
const MAX_PLAIN_TOKEN = 256;

function verifyZoom({ rawBody, headers, secrets, config, now }: VerifyInput) {
  const keys = requireSecrets(secrets, 'zoom');
  const tolerance = toleranceOf(config.toleranceSeconds);
  const header = requireHeader(headers, SIGNATURE, 'x-zm-signature');
  const timestamp = requireHeader(headers, TIMESTAMP, 'x-zm-request-timestamp');
  const seconds = parseUnixSeconds(timestamp, 'x-zm-request-timestamp');
  const signature = header.startsWith(PREFIX) ? decodeHex(header.slice(PREFIX.length)) : undefined;
  if (signature?.length !== 32) {
    throw new SignatureError('SIGNATURE_MALFORMED', 'x-zm-signature header is not v0=<64 hex digits>');
  }
  if (!anyHmacMatches(keys, ['v0:', timestamp, ':', rawBody], [signature])) {
    throw new SignatureError('SIGNATURE_INVALID', 'x-zm-signature does not match the body');
  }
  assertWithinTolerance(seconds, now, tolerance);
  return { scheme: 'zoom', timestamp: new Date(seconds * 1000) };
}

/**
 * Zoom: `x-zm-signature: v0=<hex>` of HMAC-SHA256 (key: the app's Secret Token) over
 * `v0:${x-zm-request-timestamp}:${raw body}`. The `endpoint.url_validation` challenge is verified the same
 * way first (answering it unverified would sign any text an attacker chose), then answered with
 * `{ plainToken, encryptedToken }`, the hex HMAC-SHA256 of the plain token. Delivery id: none in a header
 * (the body hash; Zoom redelivers the same bytes).
 */
export const zoom: SenderScheme<'zoom'> = {
  name: 'zoom',
  takesSecret: true,
  options: { toleranceSeconds: toleranceOption() },
  secretHeaders: [SIGNATURE],
  secretValuePrefixes: [],

  devSecret: hexDevSecret,

  handshake(request) {
    const body = jsonObjectOf(request.rawBody);
    if (body?.event !== 'endpoint.url_validation') return undefined;
    verifyZoom(request);
    const payload = body.payload;
    const plainToken =
      typeof payload === 'object' && payload !== null
        ? (payload as Record<string, unknown>).plainToken
        : undefined;
    if (typeof plainToken !== 'string' || plainToken === '' || plainToken.length > MAX_PLAIN_TOKEN) {
      throw new SignatureError('SIGNATURE_MALFORMED', 'endpoint.url_validation without a payload.plainToken');
    }
    const key = requireSecrets(request.secrets, 'zoom')[0] ?? '';
    return jsonAnswer({ plainToken, encryptedToken: hmacSha256(key, [plainToken]).toString('hex') });
  },

  verify: verifyZoom,

  sign(input) {
    const t = unixSeconds(input.now);
    const signature = hmacSha256(signingSecret(input), ['v0:', t, ':', input.rawBody]).toString('hex');
    return { [TIMESTAMP]: t, [SIGNATURE]: `${PREFIX}${signature}` };
  },
};
