/**
 * The delivery id: the key that makes a redelivered webhook a duplicate. Taken from the configured
 * `deliveryId` expression, else the sender's own id (functions/senders), else the SHA-256 of the raw body,
 * which is stable across a sender's retries of the same delivery.
 */
import { createHash } from 'node:crypto';
import type { CompiledIntegration } from '../config/compile';
import { MappingError } from '../mapping/errors';
import { evaluateExpression, type MappingInput, prepareInput } from '../mapping/evaluate';
import { nativeValue } from '../mapping/native-when';
import { senderDeliveryId, senderScheme, type VerifiedDelivery } from '../senders';

/** Longest accepted delivery id; longer values fall back to the body hash. */
export const MAX_DELIVERY_ID_LENGTH = 256;

/** How the delivery arrived: an EventBridge event's id is always its delivery id. */
export type DeliveryOrigin = 'webhook' | 'event';

/** The body-hash fallback id: `sha256:` and the hex SHA-256 of the raw body. */
export function bodyHashDeliveryId(rawBody: Buffer): string {
  return `sha256:${createHash('sha256').update(rawBody).digest('hex')}`;
}

/**
 * A usable delivery id, or undefined: a trimmed non-empty string or a safe integer (docs/decisions.md,
 * "Numeric delivery ids"), at most MAX_DELIVERY_ID_LENGTH characters, without control characters since it
 * ends up in keys and logs.
 */
export function validDeliveryId(value: unknown): string | undefined {
  const text = typeof value === 'string' ? value.trim() : Number.isSafeInteger(value) ? String(value) : '';
  if (text === '' || text.length > MAX_DELIVERY_ID_LENGTH) return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
  return /[\u0000-\u001f\u007f]/.test(text) ? undefined : text;
}

/**
 * Resolves the delivery id. An invalid or missing id falls back to the body hash rather than rejecting the
 * delivery; an expression that fails throws `MappingError`.
 */
export async function resolveDeliveryId(
  integration: CompiledIntegration,
  input: MappingInput,
  rawBody: Buffer,
  origin: DeliveryOrigin = 'webhook',
): Promise<string> {
  const body = input.body;
  const field = (name: string): unknown =>
    typeof body === 'object' && body !== null && !Array.isArray(body) && Object.hasOwn(body, name)
      ? (body as Record<string, unknown>)[name]
      : undefined;
  let candidate: unknown;
  if (origin === 'event') candidate = field('id');
  else if (integration.deliveryId !== undefined) {
    const ready = prepareInput(input);
    if (!ready.ok) throw new MappingError([ready.problem], { integration: integration.id });
    // A plain field (the usual `deliveryId`) is read without JSONata (functions/mapping/native-when.ts).
    const native = nativeValue(integration.deliveryId, ready.prepared);
    if (native !== undefined) candidate = native.value;
    else {
      const outcome = await evaluateExpression(integration.deliveryId, ready.prepared, {
        property: 'deliveryId',
      });
      if (!outcome.ok) throw new MappingError([outcome.problem], { integration: integration.id });
      candidate = outcome.value;
    }
  } else if (integration.config.verify !== undefined) {
    candidate = senderDeliveryId(integration.config.verify, input);
  }
  return validDeliveryId(candidate) ?? bodyHashDeliveryId(rawBody);
}

/**
 * A key for what is signed, so a signed delivery sent again under another id is still a duplicate: for
 * deliveries whose id the signature does not cover, or whose sender signs parsed content. Undefined where
 * the id is signed or nothing is (docs/decisions.md, "Content keys for unsigned delivery ids").
 */
export function contentKey(
  integration: CompiledIntegration,
  rawBody: Buffer,
  verified: Pick<VerifiedDelivery, 'bodyMac' | 'signedDigest'> = {},
): string | undefined {
  const verify = integration.config.verify;
  const scheme = verify === undefined ? undefined : senderScheme(verify.scheme);
  // Nothing is signed without a secret (`none`): a replay is then no different from a forgery.
  if (verify === undefined || scheme === undefined || !scheme.takesSecret) return undefined;
  if (verified.signedDigest !== undefined) {
    return `signed:${Buffer.from(verified.signedDigest).toString('hex')}`;
  }
  const expression = integration.config.deliveryId;
  const source = scheme.deliveryId;
  const unsigned =
    expression !== undefined
      ? /\$(headers|query)\b/.test(expression)
      : verify.idHeader !== undefined
        ? !(verify.signedContent ?? '{body}').includes('{id}')
        : source !== undefined && 'header' in source && !source.signed;
  if (!unsigned) return undefined;
  if (verified.bodyMac !== undefined) {
    return `hmac:${createHash('sha256').update(verified.bodyMac).digest('hex')}`;
  }
  return createHash('sha256').update(rawBody).digest('hex');
}
