/**
 * A delivery's payload as the worker maps it, and how it is sealed into the delivery record. Headers that
 * carry signatures or credentials are verified at ingest and dropped before anything is kept.
 */
import * as z from 'zod/mini';
import { DocrelayError } from '../commons/errors';
import { openBytes, sealBytes } from '../commons/seal';
import type { MappingInput } from '../mapping/evaluate';
import { parseBodyText, storedBodyFormat } from './body';

/** The delivery's input as JSONata sees it, minus the parsed body (kept as its JSON text). */
export interface DeliveryPayload {
  /** The body's text exactly as received (verified, and known to parse). */
  readonly bodyText: string;
  /** The same text as UTF-8 bytes when the raw body is at hand, so it is sealed without encoding it again. */
  readonly bodyBytes?: Uint8Array;
  /** The body's media type when it is not JSON; a payload without one is JSON. */
  readonly contentType?: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
}

/**
 * What a rule's expressions see for a kept payload: the body parsed as the ingest parsed it, with the same
 * bindings. Throws DeliveryRefusedError when the body no longer parses.
 */
export function payloadMappingInput(payload: DeliveryPayload, receivedAt: string): MappingInput {
  return {
    body: parseBodyText(payload.bodyText, storedBodyFormat(payload.contentType)),
    contentType: payload.contentType ?? 'application/json',
    headers: payload.headers,
    query: payload.query,
    receivedAt,
  };
}

/** The sealed meta line's shape, built on first use: the ingest only seals, so zod stays out of its bundle. */
const metaSchema = (): z.ZodMiniType<Pick<DeliveryPayload, 'headers' | 'query' | 'contentType'>> =>
  z.strictObject({
    headers: z.record(z.string(), z.string()),
    query: z.record(z.string(), z.string()),
    contentType: z.optional(z.string()),
  });
let openedMeta: ReturnType<typeof metaSchema> | undefined;

/** DynamoDB items hold 400 KB; a sealed payload must leave room for the rest of the delivery record. */
export const MAX_SEALED_PAYLOAD_BYTES = 350_000;

const context = (integration: string, deliveryId: string): string => `payload:${integration}:${deliveryId}`;

/**
 * Seals a payload for the delivery record: its headers and query as one JSON line, then the body's text as
 * received, since escaping it into JSON again would cost the ingest as much as the parse.
 */
export function sealPayload(
  payload: DeliveryPayload,
  secret: string,
  integration: string,
  deliveryId: string,
): string {
  const { headers, query, contentType, bodyBytes } = payload;
  const meta = Buffer.from(`${JSON.stringify({ headers, query, contentType })}\n`, 'utf8');
  const body = bodyBytes ?? Buffer.from(payload.bodyText, 'utf8');
  return sealBytes([meta, body], secret, context(integration, deliveryId));
}

/** A sealed payload that cannot be opened (the sealing secret changed, or the record was tampered with). */
export class PayloadUnavailableError extends DocrelayError {
  override name = 'PayloadUnavailableError';
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
  const bytes = openBytes(sealed, secret, context(integration, deliveryId));
  const newline = bytes === undefined ? -1 : bytes.indexOf(0x0a);
  if (bytes === undefined || newline < 0) throw new PayloadUnavailableError();
  let meta: unknown;
  try {
    meta = JSON.parse(bytes.subarray(0, newline).toString('utf8'));
  } catch {
    throw new PayloadUnavailableError();
  }
  openedMeta ??= metaSchema();
  const result = openedMeta.safeParse(meta);
  if (!result.success) throw new PayloadUnavailableError();
  return { ...result.data, bodyText: bytes.subarray(newline + 1).toString('utf8') };
}
