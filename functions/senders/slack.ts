import { SignatureError } from './common/errors';
import { jsonAnswer, jsonObjectOf } from './common/handshake';
import { v0Scheme } from './common/v0-scheme';

const MAX_CHALLENGE = 512;

/**
 * Slack: `X-Slack-Signature: v0=<hex>`, HMAC-SHA256 over `v0:${X-Slack-Request-Timestamp}:${raw body}`, the
 * timestamp within the tolerance both ways (Slack's own verifier checks only the past). The delivery id is
 * the body's `event_id`; `url_verification` is verified, then answered with its `challenge`.
 */
export const slack = v0Scheme({
  name: 'slack',
  signature: { header: 'x-slack-signature', display: 'X-Slack-Signature' },
  timestamp: { header: 'x-slack-request-timestamp', display: 'X-Slack-Request-Timestamp' },
  // Bot and user tokens pasted where a secret NAME belongs.
  secretValuePrefixes: ['xoxb-', 'xoxp-'],
  deliveryId: { bodyField: 'event_id' },
  handshake(request, verify) {
    const body = jsonObjectOf(request.rawBody);
    if (body?.type !== 'url_verification') return undefined;
    // Slack signs the challenge like any event: verified first, so an unsigned one creates nothing either.
    verify(request);
    if (typeof body.challenge !== 'string' || body.challenge.length > MAX_CHALLENGE) {
      throw new SignatureError('SIGNATURE_MALFORMED', 'url_verification without a challenge');
    }
    return jsonAnswer({ challenge: body.challenge });
  },
});
