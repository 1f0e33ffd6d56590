import { createHash, randomUUID } from 'node:crypto';
import { parse as parseQuery, stringify as stringifyQuery } from 'node:querystring';
import { formatHmac, type HmacFormat, requireHmac } from './common/body-hmac';
import { anyHmacMatches, bytesEqual } from './common/constant-time';
import { decodeHex } from './common/encoding';
import { SignatureError } from './common/errors';
import { readHeader, requireHeader, requireSecrets } from './common/headers';
import { requireUrl, signingSecret, signingUrl } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = 'x-twilio-signature';
const DISPLAY = 'X-Twilio-Signature';
const DELIVERY = 'i-twilio-idempotency-token';
const FORMAT: HmacFormat = { algorithm: 'sha1', encoding: 'base64' };
const BODY_HASH_PARAM = 'bodySHA256';
/** More form fields than any Twilio callback sends are refused before sorting them. */
const MAX_FIELDS = 1000;

/** The form fields as Twilio signs them: names sorted, each name's values with duplicates dropped, sorted. */
function sortedFields(rawBody: Buffer): [string, string[]][] {
  const fields = new Map<string, Set<string>>();
  let count = 0;
  for (const [name, value] of new URLSearchParams(rawBody.toString('utf8'))) {
    count += 1;
    if (count > MAX_FIELDS) throw new SignatureError('SIGNATURE_MALFORMED', 'the form has too many fields');
    fields.set(name, (fields.get(name) ?? new Set()).add(value));
  }
  return [...fields.keys()].sort().map((name) => [name, [...(fields.get(name) ?? [])].sort()]);
}

/** The content Twilio signs after the URL: each sorted name followed by each of its values, as twilio-node. */
const signedFields = (fields: readonly [string, string[]][]): string =>
  fields.map(([name, values]) => values.map((value) => `${name}${value}`).join('')).join('');

/** The URL with and without its default port: Twilio signs whichever it was configured with. */
function portVariants(url: string): string[] {
  const match = /^(https?:\/\/)([^/?#]*)(.*)$/i.exec(url);
  if (!match) return [url];
  const [, scheme = '', authority = '', rest = ''] = match;
  const userEnd = authority.lastIndexOf('@') + 1;
  const hostAndPort = authority.slice(userEnd);
  const portStart = hostAndPort.indexOf(':', hostAndPort.lastIndexOf(']') + 1);
  const host = portStart < 0 ? hostAndPort : hostAndPort.slice(0, portStart);
  const defaultPort = scheme.toLowerCase() === 'https://' ? ':443' : ':80';
  const prefix = `${scheme}${authority.slice(0, userEnd)}${host}`;
  return [...new Set([url, `${prefix}${rest}`, `${prefix}${defaultPort}${rest}`])];
}

/** The query string re-encoded as Node's legacy `querystring` module does (twilio-node's last fallback). */
function legacyQuery(url: string): string {
  const start = url.indexOf('?');
  if (start < 0 || start === url.length - 1) return url;
  return `${url.slice(0, start)}?${stringifyQuery(parseQuery(url.slice(start + 1)))}`;
}

/**
 * The URLs tried, in twilio-node's order: as received (with and without the default port), then as
 * normalised by `new URL()` (special characters percent-encoded), with its query also in the legacy form.
 */
function urlVariants(url: string): string[] {
  let normalised: string;
  try {
    normalised = new URL(url).toString();
  } catch {
    return portVariants(url);
  }
  const normalisedPorts = portVariants(normalised);
  return [...new Set([...portVariants(url), ...normalisedPorts, ...normalisedPorts.map(legacyQuery)])];
}

/** The `bodySHA256` query parameter of a JSON webhook's URL, if any. */
function bodyHashParam(url: string): string | null | undefined {
  try {
    return new URL(url).searchParams.get(BODY_HASH_PARAM);
  } catch {
    return undefined;
  }
}

/**
 * Twilio: `X-Twilio-Signature`, base64 HMAC-SHA1 with the auth token over the URL and the sorted form fields
 * (JSON callbacks: the URL alone, carrying `bodySHA256`), the URL tried as twilio-node does. No timestamp.
 * The id header is unsigned, so the sorted parameters dedupe too, re-ordered or re-encoded replays included.
 */
export const twilio: SenderScheme<'twilio'> = {
  name: 'twilio',
  takesSecret: true,
  options: {},
  secretHeaders: [SIGNATURE],
  secretValuePrefixes: [],
  deliveryId: { header: DELIVERY, signed: false },

  devSecret: (random) => random.subarray(0, 16).toString('hex'),

  verify({ rawBody, headers, secrets, url }) {
    const keys = requireSecrets(secrets, 'twilio');
    const webhookUrl = requireUrl(url, 'twilio');
    const signature = requireHmac(requireHeader(headers, SIGNATURE, DISPLAY), FORMAT, DISPLAY);
    const bodyHash = bodyHashParam(webhookUrl);
    let fields = '';
    // What is signed besides the URL, canonical: the body's bytes for JSON, else the sorted parameters.
    let signedDigest: Buffer;
    if (typeof bodyHash === 'string') {
      const expected = decodeHex(bodyHash);
      signedDigest = createHash('sha256').update(rawBody).digest();
      if (expected === undefined || !bytesEqual(expected, signedDigest)) {
        throw new SignatureError('SIGNATURE_INVALID', 'the bodySHA256 of the URL does not match the body');
      }
    } else {
      const sorted = sortedFields(rawBody);
      fields = signedFields(sorted);
      signedDigest = createHash('sha256').update(JSON.stringify(sorted)).digest();
    }
    const matched = urlVariants(webhookUrl).some((candidate) =>
      anyHmacMatches(keys, [candidate, fields], [signature], FORMAT.algorithm),
    );
    if (!matched) throw new SignatureError('SIGNATURE_INVALID', `${DISPLAY} does not match the request`);
    return {
      scheme: 'twilio',
      deliveryId: readHeader(headers, DELIVERY, 'I-Twilio-Idempotency-Token'),
      signedDigest,
    };
  },

  sign(input) {
    const url = signingUrl(input);
    const json = typeof bodyHashParam(url) === 'string';
    const fields = json ? '' : signedFields(sortedFields(input.rawBody));
    return {
      [SIGNATURE]: formatHmac(signingSecret(input), [url, fields], FORMAT),
      [DELIVERY]: input.deliveryId ?? (input.newId ?? randomUUID)(),
      ...(json ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
    };
  },
};
