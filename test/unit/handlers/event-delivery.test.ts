/** The event ingest's input check: Powertools' EventBridge schema, in zod/mini, with messages naming the field. */
import { EventBridgeSchema } from '@aws-lambda-powertools/parser/schemas/eventbridge';
import fc from 'fast-check';
import { DeliveryRefusedError } from '../../../functions/core/errors';
import { parseEventDelivery } from '../../../functions/handlers/event-ingest/event-delivery';

const event = {
  version: '0',
  id: 'e-1',
  'detail-type': 'Order Placed',
  source: 'unit.orders',
  account: '123456789012',
  time: '2026-03-01T12:00:00Z',
  region: 'eu-west-1',
  resources: ['arn:aws:events:eu-west-1:123456789012:rule/orders'],
  detail: { customer: 'Ada', number: '42' },
};

const { detail: _detail, ...withoutDetail } = event;

const refusal = (input: unknown): string => {
  try {
    parseEventDelivery(input);
  } catch (error) {
    expect(error).toBeInstanceOf(DeliveryRefusedError);
    expect((error as DeliveryRefusedError).reason).toBe('malformed-body');
    return (error as Error).message;
  }
  throw new Error('accepted');
};

describe('parseEventDelivery', () => {
  it('returns the integration id and the event, without keys the envelope does not define', () => {
    const delivery = parseEventDelivery({ integrationId: 'orders', event: { ...event, extra: 1 }, more: 2 });
    expect(delivery).toEqual({ integrationId: 'orders', event });
  });

  it('keeps a replay name', () => {
    const replayed = { ...event, 'replay-name': 'orders-archive' };
    expect(parseEventDelivery({ integrationId: 'orders', event: replayed }).event).toEqual(replayed);
  });

  it.each([
    [{ nope: 1 }, 'integrationId: is missing'],
    [{ integrationId: '', event }, 'integrationId: must not be empty'],
    [{ integrationId: 'orders', event: { ...event, id: 1 } }, 'event.id: expected a string, got number'],
    [
      { integrationId: 'orders', event: { ...event, resources: 'x' } },
      'event.resources: expected an array, got string',
    ],
    [
      { integrationId: 'orders', event: { ...event, resources: [1] } },
      'event.resources.0: expected a string, got number',
    ],
    [{ integrationId: 'orders', event: withoutDetail }, 'event.detail: is missing'],
    [
      { integrationId: 'orders', event: { ...event, time: '2026-02-30T12:00:00Z' } },
      'event.time: expected an ISO 8601 date and time in UTC, e.g. 2026-03-01T12:00:00Z',
    ],
    [null, 'the input: expected an object, got null'],
  ])('refuses %j: %s', (input, message) => {
    expect(refusal(input)).toBe(message);
  });

  it('accepts and refuses what Powertools’ EventBridgeSchema accepts and refuses, with the same output', () => {
    const field = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.constant(null),
      fc.array(fc.string(), { maxLength: 2 }),
      fc.constantFrom(
        '2026-03-01T12:00:00Z',
        '2026-03-01T12:00:00.123Z',
        '2026-03-01T12:00Z',
        '2026-03-01T12:00:00+01:00',
      ),
    );
    const keys = [...Object.keys(event), 'replay-name', 'extra'];
    // Each key of the envelope (and two more) kept as it is, dropped, or given another value.
    const mutated = fc
      .tuple(
        ...keys.map(() =>
          fc.oneof(
            fc.constant('keep'),
            fc.constant('drop'),
            field.map((value) => ({ value })),
          ),
        ),
      )
      .map((choices) =>
        Object.fromEntries(
          keys.flatMap((key, index) => {
            const choice = choices[index];
            if (choice === 'drop') return [];
            if (choice === 'keep')
              return key in event ? [[key, (event as Record<string, unknown>)[key]]] : [];
            return [[key, (choice as { value: unknown }).value]];
          }),
        ),
      );
    fc.assert(
      fc.property(fc.oneof(mutated, fc.constant(event)), (candidate) => {
        const reference = EventBridgeSchema.safeParse(candidate);
        let ours: unknown;
        try {
          ours = parseEventDelivery({ integrationId: 'orders', event: candidate }).event;
        } catch (error) {
          expect(error).toBeInstanceOf(DeliveryRefusedError);
          ours = undefined;
        }
        expect(ours).toEqual(reference.success ? reference.data : undefined);
      }),
      { numRuns: 500, seed: 20261126 },
    );
  });
});
