/** The reconciler Lambda, run on a schedule (see reconcile.ts). */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Observability } from '../../commons/observability';
import { type ReconcileResult, reconcile } from '../../core/reconcile';
import type { Runtime } from '../../wiring/runtime';

/** Builds the reconciler handler from a runtime. */
export function makeReconcilerHandler(runtime: Runtime, observability: Observability) {
  const { logger, metrics } = observability;
  const handle = async (): Promise<ReconcileResult> => {
    const result = await reconcile({
      jobs: runtime.jobs,
      queue: runtime.queue,
      log: logger,
      leaseMs: runtime.settings.leaseMs,
    });
    metrics.addMetric('DeliveriesCompleted', MetricUnit.Count, result.deliveriesCompleted);
    metrics.addMetric('JobsResent', MetricUnit.Count, result.jobsResent);
    return result;
  };
  return middy(handle)
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics));
}
