import { assertHmacMatches, formatHmac, type HmacFormat, requireHmac } from './common/body-hmac';
import { SignatureError } from './common/errors';
import {
  assertWithinTolerance,
  requireHeader,
  requireSecrets,
  toleranceOf,
  toleranceOption,
} from './common/headers';
import { hexDevSecret, requireUrl, signingSecret, signingUrl } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = 'x-hubspot-signature-v3';
const TIMESTAMP = 'x-hubspot-request-timestamp';
const DISPLAY = 'X-HubSpot-Signature-v3';
const FORMAT: HmacFormat = { algorithm: 'sha256', encoding: 'base64' };
// Thirteen digits of milliseconds reach the year 2286; anything else is not a real time.
const UNIX_MILLIS = /^[0-9]{1,13}$/;

/** The escapes HubSpot decodes in the URI before signing it (its docs list exactly these). */
const DECODED: Readonly<Record<string, string>> = {
  '%3A': ':',
  '%2F': '/',
  '%3F': '?',
  '%40': '@',
  '%21': '!',
  '%24': '$',
  '%27': "'",
  '%28': '(',
  '%29': ')',
  '%2A': '*',
  '%2C': ',',
  '%3B': ';',
};

/** The URI as HubSpot signs it: the listed escapes decoded, any other left as it is. */
const signedUri = (url: string): string =>
  url.replace(
    /%(?:3A|2F|3F|40|21|24|27|28|29|2A|2C|3B)/gi,
    (encoded) => DECODED[encoded.toUpperCase()] ?? encoded,
  );

/**
 * HubSpot v3: `X-HubSpot-Signature-v3`, base64 HMAC-SHA256 with the client secret over method + URI + raw
 * body + `X-HubSpot-Request-Timestamp`, the timestamp (ms) within the tolerance both ways. Batches carry no
 * single id: the body hash is the default delivery id.
 */
export const hubspot: SenderScheme<'hubspot'> = {
  name: 'hubspot',
  takesSecret: true,
  options: { toleranceSeconds: toleranceOption() },
  // The v1 and v2 signatures HubSpot sends beside v3 are SHA-256 digests of the secret and the body.
  secretHeaders: [SIGNATURE, 'x-hubspot-signature'],
  // Private app and personal access tokens pasted where a secret NAME belongs.
  secretValuePrefixes: ['pat-'],

  devSecret: hexDevSecret,

  verify({ rawBody, headers, secrets, config, now, url, method }) {
    const keys = requireSecrets(secrets, 'hubspot');
    const tolerance = toleranceOf(config.toleranceSeconds);
    const uri = signedUri(requireUrl(url, 'hubspot'));
    const signature = requireHmac(requireHeader(headers, SIGNATURE, DISPLAY), FORMAT, DISPLAY);
    const timestamp = requireHeader(headers, TIMESTAMP, 'X-HubSpot-Request-Timestamp');
    if (!UNIX_MILLIS.test(timestamp)) {
      throw new SignatureError('SIGNATURE_MALFORMED', 'X-HubSpot-Request-Timestamp is not Unix milliseconds');
    }
    assertHmacMatches(
      keys,
      [method.toUpperCase(), uri, rawBody, timestamp],
      [signature],
      FORMAT.algorithm,
      DISPLAY,
    );
    const millis = Number(timestamp);
    assertWithinTolerance(Math.floor(millis / 1000), now, tolerance);
    return { scheme: 'hubspot', timestamp: new Date(millis) };
  },

  sign(input) {
    const timestamp = String(input.now.getTime());
    const method = (input.method ?? 'POST').toUpperCase();
    const parts = [method, signedUri(signingUrl(input)), input.rawBody, timestamp];
    return { [SIGNATURE]: formatHmac(signingSecret(input), parts, FORMAT), [TIMESTAMP]: timestamp };
  },
};
