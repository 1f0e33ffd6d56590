/**
 * Every sender scheme docrelay knows, one line each. Everything that lists schemes (the config schema and
 * its JSON Schema, the CLI's signing, the redaction list, the default delivery ids) derives from this list:
 * adding a scheme is one module beside this file and one line here.
 */

import { asana } from './asana';
import { discord } from './discord';
import { github } from './github';
import { hmac } from './hmac';
import { hmacSha256 } from './hmac-sha256';
import { meta } from './meta';
import { none } from './none';
import { shopify } from './shopify';
import { slack } from './slack';
import { sns } from './sns';
import { standardWebhooks } from './standard-webhooks';
import { stripe } from './stripe';
import { token } from './token';
import type { SenderScheme, VerifyOptionName } from './types';
import { xero } from './xero';
import { zoom } from './zoom';

/** The schemes, in the order the config schema and messages list them. */
export const SENDERS = [
  github,
  stripe,
  shopify,
  slack,
  standardWebhooks,
  zoom,
  discord,
  asana,
  meta,
  sns,
  xero,
  hmac,
  hmacSha256,
  token,
  none,
] as const;

/** The name of a known scheme (`verify.scheme`). */
export type SenderName = (typeof SENDERS)[number]['name'];

/** Every scheme name, in registry order (a non-empty tuple, as `z.enum` takes it). */
export const SENDER_SCHEMES = SENDERS.map((scheme) => scheme.name) as unknown as readonly [
  SenderName,
  ...SenderName[],
];

const byName: ReadonlyMap<string, SenderScheme> = new Map(SENDERS.map((scheme) => [scheme.name, scheme]));

/** The scheme with this name, or undefined (also for names like `constructor`: a Map has no prototype keys). */
export const senderScheme = (name: string): SenderScheme | undefined => byName.get(name);

/** True for a known scheme name. */
export const isSenderName = (name: string): name is SenderName => byName.has(name);

/** The schemes that take one option, in registry order. */
export const schemesTaking = (option: VerifyOptionName): readonly SenderScheme[] =>
  SENDERS.filter((scheme) => scheme.options[option] !== undefined);

/** Prefixes of secret VALUES of any sender, refused where the config wants a secret NAME. */
export const SECRET_VALUE_PREFIXES: readonly string[] = [
  ...new Set(SENDERS.flatMap((scheme) => scheme.secretValuePrefixes)),
];

/** Headers that carry a signature or credential for some scheme. */
export const SCHEME_SECRET_HEADERS: readonly string[] = [
  ...new Set(SENDERS.flatMap((scheme) => scheme.secretHeaders)),
];
