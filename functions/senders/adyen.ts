import { createHash } from 'node:crypto';
import { isObject, missingInBody, ownField, parseJsonObject, requireJsonObject } from './common/body-json';
import { anyHmacMatches, hmacSha256 } from './common/constant-time';
import { decodeBase64, decodeHex } from './common/encoding';
import { SignatureError, SigningError, VerifyConfigError } from './common/errors';
import { readHeader, requireSecrets } from './common/headers';
import { signingSecret } from './common/signing';
import type { SenderScheme } from './types';

/** Adyen's newer webhooks (Balance Platform, Management) sign the raw body in this header instead. */
const HMAC_HEADER = 'hmacsignature';
/** Adyen batches at most a few items; more are refused, bounding the work per request. */
const MAX_ITEMS = 100;

/** The HMAC key: Adyen shows it as hex, and the hex decodes to the key bytes. */
function hmacKeys(secrets: readonly string[], refuse: (message: string) => Error): Buffer[] {
  return secrets.map((secret, index) => {
    const key = decodeHex(secret.trim());
    if (key === undefined) throw refuse(`adyen secret #${index + 1} is not a hex HMAC key`);
    return key;
  });
}

/** A field as Adyen joins it into the signed string: missing or null as empty, anything else as text. */
const part = (value: unknown): string =>
  value === undefined || value === null ? '' : typeof value === 'object' ? '' : String(value);

/** The string Adyen signs for one NotificationRequestItem, as its library's HmacValidator builds it. */
export function adyenSignedData(item: Record<string, unknown>): string {
  const amount = ownField(item, 'amount');
  return [
    ownField(item, 'pspReference'),
    ownField(item, 'originalReference'),
    ownField(item, 'merchantAccountCode'),
    ownField(item, 'merchantReference'),
    ownField(amount, 'value'),
    ownField(amount, 'currency'),
    ownField(item, 'eventCode'),
    ownField(item, 'success'),
  ]
    .map(part)
    .join(':');
}

/** The NotificationRequestItems of a standard notification; refuses a body that is not one. */
function notificationItems(rawBody: Buffer): Record<string, unknown>[] {
  const list = ownField(parseJsonObject(rawBody), 'notificationItems');
  if (!Array.isArray(list) || list.length === 0) throw missingInBody('Adyen notificationItems');
  if (list.length > MAX_ITEMS) {
    throw new SignatureError('SIGNATURE_MALFORMED', 'the notification has too many items');
  }
  return list.map((entry) => {
    const item = ownField(entry, 'NotificationRequestItem');
    if (!isObject(item)) throw missingInBody('NotificationRequestItem');
    return item;
  });
}

/**
 * Adyen: each notification item's `additionalData.hmacSignature` over its documented fields, and every item
 * must match, so a batch is never half-trusted; or `HmacSignature` over the raw body. No timestamp or id is
 * signed: the delivery id is the body hash or the signed fields' content key. Details: docs/senders.md.
 */
export const adyen: SenderScheme<'adyen'> = {
  name: 'adyen',
  takesSecret: true,
  options: {},
  secretHeaders: [HMAC_HEADER],
  secretValuePrefixes: [],

  devSecret: (random) => random.toString('hex').toUpperCase(),

  verify({ rawBody, headers, secrets }) {
    const keys = hmacKeys(requireSecrets(secrets, 'adyen'), (message) => new VerifyConfigError(message));
    const header = readHeader(headers, HMAC_HEADER, 'HmacSignature');
    if (header !== undefined) {
      const signature = decodeBase64(header);
      if (signature?.length !== 32) {
        throw new SignatureError('SIGNATURE_MALFORMED', 'HmacSignature header is not a base64 HMAC-SHA256');
      }
      if (!anyHmacMatches(keys, [rawBody], [signature])) {
        throw new SignatureError('SIGNATURE_INVALID', 'HmacSignature does not match the body');
      }
      return { scheme: 'adyen' };
    }
    const signedItems: string[] = [];
    for (const item of notificationItems(rawBody)) {
      const presented = ownField(ownField(item, 'additionalData'), 'hmacSignature');
      if (typeof presented !== 'string' || presented === '') throw missingInBody('hmacSignature in an item');
      const signature = decodeBase64(presented);
      if (signature?.length !== 32) {
        throw new SignatureError('SIGNATURE_MALFORMED', 'an item hmacSignature is not a base64 HMAC-SHA256');
      }
      const signed = adyenSignedData(item);
      if (!anyHmacMatches(keys, [signed], [signature])) {
        throw new SignatureError('SIGNATURE_INVALID', 'an item hmacSignature does not match the item');
      }
      signedItems.push(signed);
    }
    // The eight signed fields of every item, in a fixed order: re-serialised or re-ordered, or with unsigned
    // fields changed, the notification keeps its content key.
    const signedDigest = createHash('sha256').update(JSON.stringify(signedItems.sort())).digest();
    return { scheme: 'adyen', signedDigest };
  },

  sign() {
    // Each item's signature is written into the body by signBody.
    return {};
  },

  signBody(input) {
    const [key] = hmacKeys([signingSecret(input)], (message) => new SigningError(message));
    const body = requireJsonObject(
      input.rawBody,
      (message) => new SigningError(message),
      'an Adyen notification',
    );
    const items = ownField(body, 'notificationItems');
    if (!Array.isArray(items)) throw new SigningError('an Adyen notification has notificationItems');
    const signed = items.map((entry: unknown) => {
      const item = ownField(entry, 'NotificationRequestItem');
      if (!isObject(item)) throw new SigningError('each notification item has a NotificationRequestItem');
      const additionalData = isObject(item.additionalData) ? item.additionalData : {};
      const hmacSignature = hmacSha256(key as Buffer, [adyenSignedData(item)]).toString('base64');
      return { NotificationRequestItem: { ...item, additionalData: { ...additionalData, hmacSignature } } };
    });
    return Buffer.from(JSON.stringify({ ...body, notificationItems: signed }));
  },
};
