/**
 * The delivery id: the key that makes a redelivered webhook a duplicate. Taken from the configured
 * `deliveryId` expression, else the sender's own id (per verify scheme), else the SHA-256 of the raw body,
 * which is stable across a sender's retries of the same delivery.
 */
import { createHash } from 'node:crypto';
import type { CompiledIntegration } from '../config/compile';
import type { VerifyScheme } from '../config/schema';
import { MappingError } from './errors';
import { evaluateExpression, type MappingInput, prepareInput } from './evaluate';

/** Longest accepted delivery id; longer values fall back to the body hash. */
export const MAX_DELIVERY_ID_LENGTH = 256;

/** Where each scheme's sender puts its own delivery id (documented in docs/configuration.md). */
export const DEFAULT_DELIVERY_ID: Readonly<
  Record<VerifyScheme, { header: string } | { bodyField: string } | undefined>
> = {
  github: { header: 'x-github-delivery' },
  stripe: { bodyField: 'id' },
  shopify: { header: 'x-shopify-webhook-id' },
  'standard-webhooks': { header: 'webhook-id' },
  slack: { bodyField: 'event_id' },
  'hmac-sha256': undefined,
  token: undefined,
  none: undefined,
};

/** How the delivery arrived: an EventBridge event's id is always its delivery id. */
export type DeliveryOrigin = 'webhook' | 'event';

/** The body-hash fallback id: `sha256:` and the hex SHA-256 of the raw body. */
export function bodyHashDeliveryId(rawBody: Buffer): string {
  return `sha256:${createHash('sha256').update(rawBody).digest('hex')}`;
}

/**
 * A usable delivery id, or undefined: a non-empty string (trimmed) or a safe integer, at most
 * `MAX_DELIVERY_ID_LENGTH` characters, without control characters (it ends up in keys and logs). Other
 * numbers are refused: above 2^53 two ids can parse to the same double and collide, and fractions print
 * differently across senders; quote such ids (`$string(id)` only helps if the sender sends a string).
 */
export function validDeliveryId(value: unknown): string | undefined {
  const text = typeof value === 'string' ? value.trim() : Number.isSafeInteger(value) ? String(value) : '';
  if (text === '' || text.length > MAX_DELIVERY_ID_LENGTH) return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
  return /[\u0000-\u001f\u007f]/.test(text) ? undefined : text;
}

/**
 * Resolves the delivery id. An invalid or missing id (expression result, header or field) falls back to the
 * body hash rather than rejecting the delivery; an expression that fails (e.g. times out) throws `MappingError`.
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
    const outcome = await evaluateExpression(integration.deliveryId, ready.prepared, {
      property: 'deliveryId',
    });
    if (!outcome.ok) throw new MappingError([outcome.problem], { integration: integration.id });
    candidate = outcome.value;
  } else {
    const scheme = integration.config.verify?.scheme;
    const source = scheme === undefined ? undefined : DEFAULT_DELIVERY_ID[scheme];
    if (source !== undefined) {
      candidate =
        'header' in source
          ? Object.hasOwn(input.headers, source.header)
            ? input.headers[source.header]
            : undefined
          : field(source.bodyField);
    }
  }
  return validDeliveryId(candidate) ?? bodyHashDeliveryId(rawBody);
}
