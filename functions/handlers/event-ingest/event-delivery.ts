/**
 * The event ingest's input, checked: the rule's integration id and an EventBridge event. Powertools'
 * `EventBridgeSchema` is rewritten in `zod/mini` to keep classic zod out of the bundle (docs/decisions.md,
 * "AWS clients and bundles").
 */
import * as z from 'zod/mini';
import { DeliveryRefusedError } from '../../core/errors';

/** An EventBridge event as the bus delivers it to a target. */
const eventBridgeEventSchema = z.object({
  version: z.string(),
  id: z.string(),
  source: z.string(),
  account: z.string(),
  time: z.iso.datetime(),
  region: z.string(),
  resources: z.array(z.string()),
  'detail-type': z.string(),
  detail: z.unknown(),
  'replay-name': z.optional(z.string()),
});

const eventDeliverySchema = z.object({
  integrationId: z.string().check(z.minLength(1)),
  event: eventBridgeEventSchema,
});

/** What the EventBridge target sends: the integration id and the matching event. */
export type EventDelivery = z.infer<typeof eventDeliverySchema>;

/** The JSON type of a value, as a message names it. */
function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** The value at `path` in `input`, for a message (undefined where the path leaves the input). */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** One line for a schema issue: where, and what was expected (zod/mini's own message is "Invalid input"). */
function describeIssue(input: unknown, issue: z.core.$ZodIssue): string {
  const where = issue.path.length === 0 ? 'the input' : issue.path.map(String).join('.');
  const found = valueAt(input, issue.path);
  switch (issue.code) {
    case 'invalid_type':
      return found === undefined
        ? `${where}: is missing`
        : `${where}: expected ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}, got ${typeOf(found)}`;
    case 'too_small':
      return `${where}: must not be empty`;
    case 'invalid_format':
      return `${where}: expected an ISO 8601 date and time in UTC, e.g. 2026-03-01T12:00:00Z`;
    default:
      return `${where}: is invalid (${issue.code})`;
  }
}

/**
 * The event delivery in `input`, or a `DeliveryRefusedError` (`malformed-body`) naming the first wrong field.
 * Keys EventBridge's envelope does not define are dropped, as Powertools' schema drops them.
 */
export function parseEventDelivery(input: unknown): EventDelivery {
  const result = eventDeliverySchema.safeParse(input);
  if (result.success) return result.data;
  const [first] = result.error.issues;
  throw new DeliveryRefusedError(
    'malformed-body',
    first === undefined ? 'the input: is not an event delivery' : describeIssue(input, first),
  );
}
