import { anyHmacMatches, hmacSha256 } from './common/constant-time';
import { decodeHex } from './common/encoding';
import { SignatureError } from './common/errors';
import {
  assertWithinTolerance,
  MAX_SIGNATURES,
  parseUnixSeconds,
  requireHeader,
  requireSecrets,
  toleranceOf,
  toleranceOption,
} from './common/headers';
import { hexDevSecret, signingSecret, unixSeconds } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = 'stripe-signature';
const malformed = (detail: string): SignatureError => new SignatureError('SIGNATURE_MALFORMED', detail);

/**
 * Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>...]` over `${t}.${raw body}`; any v1 may match,
 * v0 and unknown schemes are ignored as Stripe's own library does; `t` within the tolerance both ways.
 * The event id is the body's `id`.
 */
export const stripe: SenderScheme<'stripe'> = {
  name: 'stripe',
  takesSecret: true,
  options: { toleranceSeconds: toleranceOption() },
  secretHeaders: [SIGNATURE],
  // Webhook signing secrets and API keys pasted where a secret NAME belongs.
  secretValuePrefixes: ['whsec_', 'sk_live_', 'sk_test_'],
  deliveryId: { bodyField: 'id' },

  devSecret: hexDevSecret,

  verify({ rawBody, headers, secrets, config, now }) {
    const keys = requireSecrets(secrets, 'stripe');
    const tolerance = toleranceOf(config.toleranceSeconds);
    const header = requireHeader(headers, SIGNATURE, 'Stripe-Signature');

    let timestamp: string | undefined;
    let v1Count = 0;
    const signatures: Buffer[] = [];
    for (const item of header.split(',')) {
      const eq = item.indexOf('=');
      if (eq < 0) continue;
      const key = item.slice(0, eq).trim();
      const value = item.slice(eq + 1).trim();
      if (key === 't') {
        // Two timestamps (e.g. a repeated header joined by the proxy) leave no single signed payload.
        if (timestamp !== undefined) throw malformed('Stripe-Signature header has more than one timestamp');
        timestamp = value;
      } else if (key === 'v1') {
        v1Count += 1;
        if (v1Count > MAX_SIGNATURES) throw malformed('Stripe-Signature header has too many signatures');
        const signature = decodeHex(value);
        // An undecodable entry simply cannot match; the others still may.
        if (signature?.length === 32) signatures.push(signature);
      }
    }
    if (timestamp === undefined) throw malformed('Stripe-Signature header has no timestamp');
    if (v1Count === 0) throw malformed('Stripe-Signature header has no v1 signature');
    const seconds = parseUnixSeconds(timestamp, 'Stripe-Signature timestamp');

    if (!anyHmacMatches(keys, [timestamp, '.', rawBody], signatures)) {
      throw new SignatureError('SIGNATURE_INVALID', 'no Stripe-Signature v1 signature matches the body');
    }
    assertWithinTolerance(seconds, now, tolerance);
    return { scheme: 'stripe', timestamp: new Date(seconds * 1000) };
  },

  sign(input) {
    const t = unixSeconds(input.now);
    const signature = hmacSha256(signingSecret(input), [t, '.', input.rawBody]).toString('hex');
    return { [SIGNATURE]: `t=${t},v1=${signature}` };
  },
};
