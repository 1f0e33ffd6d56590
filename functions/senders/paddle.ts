import { assertHmacMatches, decodeHmac, formatHmac, type HmacFormat } from './common/body-hmac';
import { SignatureError } from './common/errors';
import {
  assertWithinTolerance,
  parseUnixSeconds,
  requireHeader,
  requireSecrets,
  toleranceOf,
  toleranceOption,
} from './common/headers';
import { parseKeyedList, singleValue } from './common/keyed-list';
import { signingSecret, unixSeconds } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = 'paddle-signature';
const DISPLAY = 'Paddle-Signature';
const FORMAT: HmacFormat = { algorithm: 'sha256', encoding: 'hex' };
/** Paddle's SDK refuses a signature more than 5 seconds from now; its docs say to allow for clock skew. */
const TOLERANCE_SECONDS = 5;

/**
 * Paddle Billing: `Paddle-Signature: ts=<unix>;h1=<hex>` of HMAC-SHA256 over `${ts}:${raw body}` with the
 * notification destination's secret key; during a secret rotation Paddle sends one h1 per active secret.
 * `ts` within the tolerance (5 s by default, as Paddle's SDK) both ways. The delivery id is the body's
 * `event_id`, which the signature covers.
 */
export const paddle: SenderScheme<'paddle'> = {
  name: 'paddle',
  takesSecret: true,
  options: { toleranceSeconds: toleranceOption(TOLERANCE_SECONDS) },
  secretHeaders: [SIGNATURE],
  // Paddle API keys pasted where a secret NAME belongs (secret keys are `pdl_ntfset_...`).
  secretValuePrefixes: ['pdl_ntfset_', 'pdl_live_apikey_', 'pdl_sdbx_apikey_'],
  deliveryId: { bodyField: 'event_id' },

  devSecret: (random) => `pdl_ntfset_dev_${random.toString('hex')}`,

  verify({ rawBody, headers, secrets, config, now }) {
    const keys = requireSecrets(secrets, 'paddle');
    const tolerance = toleranceOf(config.toleranceSeconds, TOLERANCE_SECONDS);
    const values = parseKeyedList(requireHeader(headers, SIGNATURE, DISPLAY), ';', DISPLAY);
    const timestamp = singleValue(values, 'ts', DISPLAY);
    const h1 = values.get('h1') ?? [];
    if (h1.length === 0) throw new SignatureError('SIGNATURE_MALFORMED', `${DISPLAY} header has no h1`);
    const seconds = parseUnixSeconds(timestamp, `${DISPLAY} timestamp`);
    const signatures = h1.flatMap((value) => decodeHmac(value, FORMAT) ?? []);
    assertHmacMatches(keys, [timestamp, ':', rawBody], signatures, FORMAT.algorithm, DISPLAY);
    assertWithinTolerance(seconds, now, tolerance);
    return { scheme: 'paddle', timestamp: new Date(seconds * 1000) };
  },

  sign(input) {
    const ts = unixSeconds(input.now);
    return {
      [SIGNATURE]: `ts=${ts};h1=${formatHmac(signingSecret(input), [ts, ':', input.rawBody], FORMAT)}`,
    };
  },
};
