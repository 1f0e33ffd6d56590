/**
 * The keyed-list family (Calendly `t=..,v1=..`, Paddle `ts=..;h1=..`): one header listing a timestamp and one
 * or more hex HMAC-SHA256 signatures over `${timestamp}${joiner}${raw body}`, the timestamp within the
 * tolerance both ways. A preset is its header, separator, keys, joiner and tolerance.
 */
import type { DeliveryIdSource, SenderScheme } from '../types';
import { assertHmacMatches, decodeHmac, formatHmac, type HmacFormat } from './body-hmac';
import { SignatureError } from './errors';
import {
  assertWithinTolerance,
  parseUnixSeconds,
  requireHeader,
  requireSecrets,
  toleranceOf,
  toleranceOption,
} from './headers';
import { parseKeyedList, singleValue } from './keyed-list';
import { hexDevSecret, signingSecret, unixSeconds } from './signing';

const FORMAT: HmacFormat = { algorithm: 'sha256', encoding: 'hex' };

/** What a keyed-list sender is. */
export interface KeyedListSender<Name extends string> {
  readonly name: Name;
  /** The signature header: lower-case name and its documented spelling. */
  readonly signature: { readonly header: string; readonly display: string };
  /** Between the list's entries. */
  readonly separator: ',' | ';';
  /** The keys of the timestamp and of the signatures, e.g. `t` and `v1`. */
  readonly keys: { readonly timestamp: string; readonly signature: string };
  /** Between the timestamp and the body in the signed content. */
  readonly joiner: string;
  /** The default tolerance, in seconds. */
  readonly toleranceSeconds: number;
  readonly secretValuePrefixes?: readonly string[];
  readonly deliveryId?: DeliveryIdSource;
  readonly devSecret?: (random: Buffer) => string;
}

/** A sender scheme of the keyed-list family. */
export function keyedListScheme<Name extends string>(sender: KeyedListSender<Name>): SenderScheme<Name> {
  const { name, signature, separator, keys, joiner } = sender;
  return {
    name,
    takesSecret: true,
    options: { toleranceSeconds: toleranceOption(sender.toleranceSeconds) },
    secretHeaders: [signature.header],
    secretValuePrefixes: sender.secretValuePrefixes ?? [],
    ...(sender.deliveryId === undefined ? {} : { deliveryId: sender.deliveryId }),
    devSecret: sender.devSecret ?? hexDevSecret,

    verify({ rawBody, headers, secrets, config, now }) {
      const secretKeys = requireSecrets(secrets, name);
      const tolerance = toleranceOf(config.toleranceSeconds, sender.toleranceSeconds);
      const values = parseKeyedList(
        requireHeader(headers, signature.header, signature.display),
        separator,
        signature.display,
      );
      const timestamp = singleValue(values, keys.timestamp, signature.display);
      const listed = values.get(keys.signature) ?? [];
      if (listed.length === 0) {
        throw new SignatureError(
          'SIGNATURE_MALFORMED',
          `${signature.display} header has no ${keys.signature}`,
        );
      }
      const seconds = parseUnixSeconds(timestamp, `${signature.display} timestamp`);
      const presented = listed.flatMap((value) => decodeHmac(value, FORMAT) ?? []);
      assertHmacMatches(
        secretKeys,
        [timestamp, joiner, rawBody],
        presented,
        FORMAT.algorithm,
        signature.display,
      );
      assertWithinTolerance(seconds, now, tolerance);
      return { scheme: name, timestamp: new Date(seconds * 1000) };
    },

    sign(input) {
      const t = unixSeconds(input.now);
      const mac = formatHmac(signingSecret(input), [t, joiner, input.rawBody], FORMAT);
      return { [signature.header]: `${keys.timestamp}=${t}${separator}${keys.signature}=${mac}` };
    },
  };
}
