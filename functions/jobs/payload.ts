/**
 * A delivery's payload as the worker maps it, and how it is sealed into the delivery record. Headers that
 * carry signatures or credentials are verified at ingest and dropped before anything is kept.
 */
import { z } from 'zod';
import { DocrelayError } from '../commons/errors';
import { openJson, sealJson } from './seal';

/** The delivery's input as JSONata sees it, minus the parsed body (kept as its JSON text). */
export interface DeliveryPayload {
  /** The body's JSON text exactly as received (verified, and known to parse). */
  readonly bodyText: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
}

const payloadSchema = z.strictObject({
  bodyText: z.string(),
  headers: z.record(z.string(), z.string()),
  query: z.record(z.string(), z.string()),
});

/** DynamoDB items hold 400 KB; a sealed payload must leave room for the rest of the delivery record. */
export const MAX_SEALED_PAYLOAD_BYTES = 350_000;

const SENSITIVE_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-hub-signature',
  'x-hub-signature-256',
  'stripe-signature',
  'x-shopify-hmac-sha256',
  'x-slack-signature',
  'webhook-signature',
  'x-api-key',
]);

/** Drops headers that carry signatures or credentials, and any header the integration verifies. */
export function redactHeaders(
  headers: Readonly<Record<string, string>>,
  extra: readonly string[] = [],
): Record<string, string> {
  const drop = new Set([...SENSITIVE_HEADERS, ...extra.map((h) => h.toLowerCase())]);
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!drop.has(name) && !name.includes('signature') && !name.includes('token')) kept[name] = value;
  }
  return kept;
}

const context = (integration: string, deliveryId: string): string => `payload:${integration}:${deliveryId}`;

/** Seals a payload for the delivery record. */
export function sealPayload(
  payload: DeliveryPayload,
  secret: string,
  integration: string,
  deliveryId: string,
): string {
  return sealJson(payload, secret, context(integration, deliveryId));
}

/** A sealed payload that cannot be opened (the sealing secret changed, or the record was tampered with). */
export class PayloadUnavailableError extends DocrelayError {
  constructor() {
    super('PAYLOAD_UNAVAILABLE', 'the delivery payload cannot be opened (was the sealing secret replaced?)');
  }
}

/** Opens a sealed payload. */
export function openPayload(
  sealed: string,
  secret: string,
  integration: string,
  deliveryId: string,
): DeliveryPayload {
  const result = payloadSchema.safeParse(openJson(sealed, secret, context(integration, deliveryId)));
  if (!result.success) throw new PayloadUnavailableError();
  return result.data;
}
