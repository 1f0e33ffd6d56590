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
import type { SenderScheme } from './types';

const PREFIX = 'v0=';
const SIGNATURE = 'x-slack-signature';
const TIMESTAMP = 'x-slack-request-timestamp';
const MAX_CHALLENGE = 512;

/**
 * Slack: `X-Slack-Signature: v0=<hex>` of HMAC-SHA256 over `v0:${X-Slack-Request-Timestamp}:${raw body}`,
 * with the timestamp within the tolerance both ways (Slack's own verifier checks only the past).
 * The event id is the body's `event_id` (Events API). The `url_verification` challenge is verified, then
 * answered with its `challenge`.
 */
export const slack: SenderScheme<'slack'> = {
  name: 'slack',
  takesSecret: true,
  options: { toleranceSeconds: toleranceOption() },
  secretHeaders: [SIGNATURE],
  // Bot and user tokens pasted where a secret NAME belongs.
  secretValuePrefixes: ['xoxb-', 'xoxp-'],
  deliveryId: { bodyField: 'event_id' },

  devSecret: hexDevSecret,

  handshake(request) {
    const body = jsonObjectOf(request.rawBody);
    if (body?.type !== 'url_verification') return undefined;
    // Slack signs the challenge like any event: verified first, so an unsigned one creates nothing either.
    slack.verify(request);
    if (typeof body.challenge !== 'string' || body.challenge.length > MAX_CHALLENGE) {
      throw new SignatureError('SIGNATURE_MALFORMED', 'url_verification without a challenge');
    }
    return jsonAnswer({ challenge: body.challenge });
  },

  verify({ rawBody, headers, secrets, config, now }) {
    const keys = requireSecrets(secrets, 'slack');
    const tolerance = toleranceOf(config.toleranceSeconds);
    const header = requireHeader(headers, SIGNATURE, 'X-Slack-Signature');
    const timestamp = requireHeader(headers, TIMESTAMP, 'X-Slack-Request-Timestamp');
    const seconds = parseUnixSeconds(timestamp, 'X-Slack-Request-Timestamp');
    const signature = header.startsWith(PREFIX) ? decodeHex(header.slice(PREFIX.length)) : undefined;
    if (signature?.length !== 32) {
      throw new SignatureError('SIGNATURE_MALFORMED', 'X-Slack-Signature header is not v0=<64 hex digits>');
    }
    if (!anyHmacMatches(keys, ['v0:', timestamp, ':', rawBody], [signature])) {
      throw new SignatureError('SIGNATURE_INVALID', 'X-Slack-Signature does not match the body');
    }
    assertWithinTolerance(seconds, now, tolerance);
    return { scheme: 'slack', timestamp: new Date(seconds * 1000) };
  },

  sign(input) {
    const t = unixSeconds(input.now);
    const signature = hmacSha256(signingSecret(input), ['v0:', t, ':', input.rawBody]).toString('hex');
    return { [TIMESTAMP]: t, [SIGNATURE]: `${PREFIX}${signature}` };
  },
};
