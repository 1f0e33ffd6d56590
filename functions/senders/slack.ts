import { anyHmacMatches } from './constant-time';
import { decodeHex } from './encoding';
import { SignatureError } from './errors';
import {
  assertWithinTolerance,
  parseUnixSeconds,
  requireHeader,
  requireSecrets,
  toleranceOf,
} from './headers';
import type { SchemeVerifier } from './types';

const PREFIX = 'v0=';

/**
 * Slack: `X-Slack-Signature: v0=<hex>` of HMAC-SHA256 over `v0:${X-Slack-Request-Timestamp}:${raw body}`,
 * with the timestamp within the tolerance both ways (Slack's own verifier checks only the past).
 */
export const verifySlack: SchemeVerifier = ({ rawBody, headers, secrets, config, now }) => {
  const keys = requireSecrets(secrets, 'slack');
  const tolerance = toleranceOf(config.toleranceSeconds);
  const header = requireHeader(headers, 'x-slack-signature', 'X-Slack-Signature');
  const timestamp = requireHeader(headers, 'x-slack-request-timestamp', 'X-Slack-Request-Timestamp');
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
};
