/**
 * The event ingest Lambda: an EventBridge rule per integration with `eventBridge.eventPattern` targets it
 * with the integration id as a constant input wrapper; each matching event becomes a delivery through the same
 * dedupe and job path as a webhook (deliveryId = the event's id). No signature: the bus's IAM guards it.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { EventBridgeSchema } from '@aws-lambda-powertools/parser/schemas/eventbridge';
import middy from '@middy/core';
import { z } from 'zod';
import { type Observability, traced } from '../../commons/observability';
import { type AcceptedDelivery, acceptEvent, type IngestDeps } from '../../core/accept-delivery';
import { recordAccepted } from '../record-accepted';

/** What the EventBridge target sends: the integration id and the matching event. */
export const eventDeliverySchema = z.object({
  integrationId: z.string().min(1),
  event: EventBridgeSchema,
});

/** The event delivery input. */
export type EventDelivery = z.infer<typeof eventDeliverySchema>;

/** Builds the event ingest handler. Throws (so EventBridge retries) on a failure. */
export function makeEventIngestHandler(deps: IngestDeps, observability: Observability) {
  const { logger, metrics } = observability;
  const handle = async (input: unknown): Promise<AcceptedDelivery['body']> => {
    const { integrationId, event } = eventDeliverySchema.parse(input);
    const accepted = await acceptEvent(deps, integrationId, event as Record<string, unknown>);
    recordAccepted(observability, 'event', integrationId, accepted.body);
    return accepted.body;
  };
  return middy(handle)
    .use(traced(observability))
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics));
}
