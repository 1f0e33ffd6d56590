/**
 * Webhook senders: verifying a delivery as its sender signed it, signing one as its sender would
 * (`docrelay send`), the sender's own delivery id, and the headers never to keep. One module per scheme;
 * `registry.ts` lists them.
 */
import { SigningError, VerifyConfigError } from './common/errors';
import { SCHEME_SECRET_HEADERS, senderScheme } from './registry';
import type { SignInput, VerifiedDelivery, VerifyConfig, VerifyInput } from './types';

export {
  SignatureError,
  type SignatureErrorCode,
  SigningError,
  VerifyConfigError,
} from './common/errors';
export { isSenderName, SENDER_SCHEMES, SENDERS, type SenderName, senderScheme } from './registry';
export type {
  DeliveryIdSource,
  HandshakeAnswer,
  HandshakeContext,
  HandshakeRequest,
  SenderScheme,
  SignInput,
  VerifiedDelivery,
  VerifyConfig,
  VerifyInput,
} from './types';

/**
 * Verifies one delivery over its raw bytes, synchronously; throws SignatureError (refuse with 401) or
 * VerifyConfigError (the integration is misconfigured).
 */
export function verifyDelivery(input: VerifyInput): VerifiedDelivery {
  const scheme = senderScheme(input.config.scheme);
  if (scheme === undefined) throw new VerifyConfigError('unknown verify scheme');
  return scheme.verify(input);
}

/** The headers (lower-case names) that make these bytes pass the integration's verification; throws SigningError. */
export function signDelivery(input: SignInput): Record<string, string> {
  const scheme = senderScheme(input.config.scheme);
  if (scheme === undefined) throw new SigningError(`unknown verify scheme ${String(input.config.scheme)}`);
  return scheme.sign(input);
}

/**
 * The sender's own id for a delivery, from the header or body field its scheme names; undefined when the
 * scheme has none or the delivery lacks it. The caller validates it (and falls back to the body hash).
 */
export function senderDeliveryId(
  config: VerifyConfig,
  delivery: { readonly headers: Readonly<Record<string, string>>; readonly body: unknown },
): unknown {
  // A configured id header (generic hmac's `idHeader`) is the scheme's own id source.
  const source =
    config.idHeader === undefined
      ? senderScheme(config.scheme)?.deliveryId
      : ({ header: config.idHeader, signed: false } as const);
  if (source === undefined) return undefined;
  // Own properties only: a header or field named like an Object.prototype member must not resolve to one.
  if ('header' in source) {
    return Object.hasOwn(delivery.headers, source.header) ? delivery.headers[source.header] : undefined;
  }
  const path = 'bodyField' in source ? [source.bodyField] : source.bodyPath;
  let value: unknown = delivery.body;
  for (const key of path) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, key)) {
      return undefined;
    }
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * The bytes to post when signing as the integration's sender (`docrelay send`): the same bytes, except for
 * senders that sign inside the body or carry a signed time in it. Throws SigningError.
 */
export function signedBody(input: SignInput): Buffer {
  const scheme = senderScheme(input.config.scheme);
  if (scheme === undefined) throw new SigningError(`unknown verify scheme ${String(input.config.scheme)}`);
  return scheme.signBody?.(input) ?? input.rawBody;
}

/** Credentials any request may carry, whatever its scheme. */
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'x-api-key'];

/** The headers every delivery drops, built on first use (every ingest request redacts its headers). */
let alwaysDropped: ReadonlySet<string> | undefined;

/**
 * The headers without those that carry signatures or credentials: generic credentials, any name with
 * `signature` or `token` in it, every scheme's secret headers, and the header the integration verifies.
 */
export function redactHeaders(
  headers: Readonly<Record<string, string>>,
  config?: Pick<VerifyConfig, 'header'>,
): Record<string, string> {
  alwaysDropped ??= new Set([...CREDENTIAL_HEADERS, ...SCHEME_SECRET_HEADERS]);
  const configured = config?.header?.trim().toLowerCase();
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    const dropped =
      lower === configured ||
      alwaysDropped.has(lower) ||
      lower.includes('signature') ||
      lower.includes('token');
    if (!dropped) kept[name] = value;
  }
  return kept;
}
