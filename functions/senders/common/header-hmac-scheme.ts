/**
 * The most common sender shape, as one builder: an HMAC of the raw body in one header, no signed timestamp,
 * and the sender's delivery id in another header that the signature does not cover, or in a body field that
 * it does. A preset of that shape is its names and formats; its own module stays the one place that says them.
 */
import { randomUUID } from 'node:crypto';
import type { SenderScheme, SignInput } from '../types';
import { assertHmacMatches, formatHmac, type HmacFormat, requireHmac } from './body-hmac';
import { readHeader, requireHeader, requireSecrets } from './headers';
import { hexDevSecret, signingSecret } from './signing';

/** What a header-HMAC sender is. */
export interface HeaderHmacSender<Name extends string> {
  readonly name: Name;
  /** The signature header: lower-case name and its documented spelling. */
  readonly signature: { readonly header: string; readonly display: string };
  readonly format: HmacFormat;
  /** The delivery id: a header (not signed), lower-case name and documented spelling; or a signed body field. */
  readonly delivery: { readonly header: string; readonly display: string } | { readonly bodyField: string };
  /** Headers the sender also sends (for `docrelay send`), e.g. an event topic, or made per delivery. */
  readonly extraHeaders?: Readonly<Record<string, string>> | ((input: SignInput) => Record<string, string>);
  /** Other headers that carry a signature (never kept), e.g. GitHub's legacy SHA-1 one. */
  readonly otherSecretHeaders?: readonly string[];
  /** Prefixes of the sender's secret values, refused where a secret NAME belongs. */
  readonly secretValuePrefixes?: readonly string[];
}

/** A sender scheme that checks `format` over the raw body in the signature header. */
export function headerHmacScheme<Name extends string>(sender: HeaderHmacSender<Name>): SenderScheme<Name> {
  const { name, signature, format, delivery } = sender;
  return {
    name,
    takesSecret: true,
    options: {},
    secretHeaders: [signature.header, ...(sender.otherSecretHeaders ?? [])],
    secretValuePrefixes: sender.secretValuePrefixes ?? [],
    deliveryId: 'header' in delivery ? { header: delivery.header, signed: false } : delivery,

    devSecret: hexDevSecret,

    verify({ rawBody, headers, secrets }) {
      const keys = requireSecrets(secrets, name);
      const presented = requireHmac(
        requireHeader(headers, signature.header, signature.display),
        format,
        signature.display,
      );
      assertHmacMatches(keys, [rawBody], [presented], format.algorithm, signature.display);
      if (!('header' in delivery)) return { scheme: name };
      return {
        scheme: name,
        deliveryId: readHeader(headers, delivery.header, delivery.display),
        bodyMac: presented,
      };
    },

    sign(input) {
      return {
        [signature.header]: formatHmac(signingSecret(input), [input.rawBody], format),
        ...('header' in delivery
          ? { [delivery.header]: input.deliveryId ?? (input.newId ?? randomUUID)() }
          : {}),
        ...(typeof sender.extraHeaders === 'function' ? sender.extraHeaders(input) : sender.extraHeaders),
      };
    },
  };
}
