/** The reconciler Lambda, run on a schedule (see core/reconcile.ts). */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Observability } from '../../commons/observability';
import { type ReconcileDeps, type ReconcileResult, reconcile } from '../../core/reconcile';

/** Builds the reconciler handler. */
export function makeReconcilerHandler(deps: Omit<ReconcileDeps, 'log'>, observability: Observability) {
  const { logger, metrics } = observability;
  const handle = async (): Promise<ReconcileResult> => {
    const result = await reconcile({ ...deps, log: logger });
    metrics.addMetric('DeliveriesCompleted', MetricUnit.Count, result.deliveriesCompleted);
    metrics.addMetric('JobsResent', MetricUnit.Count, result.jobsResent);
    return result;
  };
  return middy(handle)
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics));
}
