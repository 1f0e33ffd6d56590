/**
 * The event ingest Lambda, targeted by each integration's EventBridge rule with its id as input: an event
 * becomes a delivery keyed by its id, through the webhook's path. No signature: the bus's IAM guards it.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import { type Observability, traced } from '../../commons/observability';
import { type AcceptedDelivery, acceptEvent, type IngestDeps } from '../../core/accept-delivery';
import { recordAccepted } from '../record-accepted';
import { parseEventDelivery } from './event-delivery';

/**
 * Builds the event ingest handler. Throws on a failure, so EventBridge retries and then dead-letters; an
 * input that is not an event delivery is a `DeliveryRefusedError` naming its first wrong field.
 */
export function makeEventIngestHandler(deps: IngestDeps, observability: Observability) {
  const { logger, metrics } = observability;
  const handle = async (input: unknown): Promise<AcceptedDelivery['body']> => {
    const { integrationId, event } = parseEventDelivery(input);
    const accepted = await acceptEvent(deps, integrationId, event);
    recordAccepted(observability, 'event', integrationId, accepted.body);
    return accepted.body;
  };
  return middy(handle)
    .use(traced(observability))
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics));
}
