import { hmacSha256 } from './common/constant-time';
import { SignatureError } from './common/errors';
import { jsonAnswer, jsonObjectOf } from './common/handshake';
import { requireSecrets } from './common/headers';
import { v0Scheme } from './common/v0-scheme';

/** Zoom's plainToken is a short random string; anything long is not Zoom's. */
const MAX_PLAIN_TOKEN = 256;

/**
 * Zoom: `x-zm-signature: v0=<hex>`, HMAC-SHA256 with the Secret Token over `v0:${timestamp}:${raw body}`.
 * The `endpoint.url_validation` challenge is verified first (answering it unverified would sign any text an
 * attacker chose), then answered. Delivery id: the body hash (Zoom redelivers the same bytes).
 */
export const zoom = v0Scheme({
  name: 'zoom',
  signature: { header: 'x-zm-signature', display: 'x-zm-signature' },
  timestamp: { header: 'x-zm-request-timestamp', display: 'x-zm-request-timestamp' },
  handshake(request, verify) {
    const body = jsonObjectOf(request.rawBody);
    if (body?.event !== 'endpoint.url_validation') return undefined;
    verify(request);
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
});
