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
import { hexDevSecret, signingSecret, unixSeconds } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = 'calendly-webhook-signature';
const DISPLAY = 'Calendly-Webhook-Signature';
const FORMAT: HmacFormat = { algorithm: 'sha256', encoding: 'hex' };
/** Calendly's docs reject signatures older than three minutes. */
const TOLERANCE_SECONDS = 180;

/**
 * Calendly: `Calendly-Webhook-Signature: t=<unix>,v1=<hex>` of HMAC-SHA256 over `${t}.${raw body}` with the
 * webhook signing key; `t` within the tolerance (three minutes, as Calendly documents) both ways. Calendly
 * sends no delivery id: the body hash is the default id.
 */
export const calendly: SenderScheme<'calendly'> = {
  name: 'calendly',
  takesSecret: true,
  options: { toleranceSeconds: toleranceOption(TOLERANCE_SECONDS) },
  secretHeaders: [SIGNATURE],
  secretValuePrefixes: [],

  devSecret: hexDevSecret,

  verify({ rawBody, headers, secrets, config, now }) {
    const keys = requireSecrets(secrets, 'calendly');
    const tolerance = toleranceOf(config.toleranceSeconds, TOLERANCE_SECONDS);
    const values = parseKeyedList(requireHeader(headers, SIGNATURE, DISPLAY), ',', DISPLAY);
    const timestamp = singleValue(values, 't', DISPLAY);
    const v1 = values.get('v1') ?? [];
    if (v1.length === 0) throw new SignatureError('SIGNATURE_MALFORMED', `${DISPLAY} header has no v1`);
    const seconds = parseUnixSeconds(timestamp, `${DISPLAY} timestamp`);
    const signatures = v1.flatMap((value) => decodeHmac(value, FORMAT) ?? []);
    assertHmacMatches(keys, [timestamp, '.', rawBody], signatures, FORMAT.algorithm, DISPLAY);
    assertWithinTolerance(seconds, now, tolerance);
    return { scheme: 'calendly', timestamp: new Date(seconds * 1000) };
  },

  sign(input) {
    const t = unixSeconds(input.now);
    return { [SIGNATURE]: `t=${t},v1=${formatHmac(signingSecret(input), [t, '.', input.rawBody], FORMAT)}` };
  },
};
