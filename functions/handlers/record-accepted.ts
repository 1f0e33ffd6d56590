/** Logging and counting an accepted delivery, alike for webhooks and EventBridge events. */
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { Observability } from '../commons/observability';
import type { AcceptedDelivery } from '../core/accept-delivery';

/** Logs the delivery (ids only, never the payload) and adds its metrics. */
export function recordAccepted(
  { logger, metrics }: Pick<Observability, 'logger' | 'metrics'>,
  what: 'delivery' | 'event',
  integration: string,
  body: AcceptedDelivery['body'],
): void {
  const duplicate = body.duplicate === true;
  logger.info(`${what} accepted`, {
    integration,
    deliveryId: body.deliveryId,
    jobs: body.jobs.map((job) => job.jobId),
    duplicate,
  });
  metrics.addMetric(duplicate ? 'DuplicateDeliveries' : 'DeliveriesAccepted', MetricUnit.Count, 1);
  metrics.addMetric('JobsQueued', MetricUnit.Count, duplicate ? 0 : body.jobs.length);
}
