/**
 * The worker Lambda: an SQS batch, one job per message, processed one after another (so the generations in
 * flight never exceed the event source's concurrency, which is `service.maxConcurrency`), with partial
 * batch responses: a message to retry is deferred (its visibility changed to the backoff) and reported as
 * failed; a job that failed for good is sent to the dead-letter queue with its reason and deleted.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { InvalidJobMessageError, parseJobMessage } from '../../adapters/sqs/job-message';
import { DocrelayError } from '../../commons/errors';
import type { Observability } from '../../commons/observability';
import { type JobOutcome, processJob, type WorkerDeps } from '../../core/process-job';
import { RetryLaterError } from '../../core/worker-errors';
import type { Runtime } from '../../wiring/runtime';

/** Worker settings beyond the runtime's. */
export interface WorkerOptions {
  /** See WorkerDeps.outageBudgetMs. @default 24 hours */
  readonly outageBudgetMs?: number;
}

/** Builds the worker handler from a runtime (the Lambda entry and the local stack's poller call this alike). */
export function makeWorkerHandler(
  runtime: Runtime,
  observability: Observability,
  options: WorkerOptions = {},
) {
  const { logger, metrics, tracer } = observability;
  const deps: WorkerDeps = {
    config: runtime.config,
    jobs: runtime.jobs,
    docgen: runtime.docgen,
    templates: runtime.templates,
    s3: runtime.s3,
    bucket: runtime.settings.bucket,
    events: runtime.events,
    secrets: runtime.secrets,
    sealingSecretName: runtime.settings.sealingSecretName,
    log: logger,
    leaseMs: runtime.settings.leaseMs,
    maxReceiveCount: runtime.settings.maxReceiveCount,
    ...(runtime.settings.partSize === undefined ? {} : { partSize: runtime.settings.partSize }),
    ...(runtime.settings.retryBaseSeconds === undefined
      ? {}
      : { retryBaseSeconds: runtime.settings.retryBaseSeconds }),
    ...(options.outageBudgetMs === undefined ? {} : { outageBudgetMs: options.outageBudgetMs }),
  };
  const processor = new BatchProcessor(EventType.SQS);

  const handleRecord = async (record: SQSRecord): Promise<void> => {
    let jobId: string;
    try {
      jobId = parseJobMessage(record.body).jobId;
    } catch (error) {
      if (error instanceof InvalidJobMessageError) {
        // Poison: it can never succeed. Park it in the dead-letter queue for a person to look at.
        logger.error('invalid job message sent to the dead-letter queue', {
          messageId: record.messageId,
          reason: error.message,
        });
        await runtime.deadLetters.sendRaw(record.body, error.code);
        metrics.addMetric('PoisonMessages', MetricUnit.Count, 1);
        return;
      }
      throw error;
    }
    logger.appendKeys({ jobId });
    const started = Date.now();
    let outcome: JobOutcome;
    try {
      outcome = await processJob(deps, jobId, {
        messageId: record.messageId,
        receiveCount: Number(record.attributes.ApproximateReceiveCount) || 1,
        extendVisibility: (seconds) => runtime.queue.defer(record.receiptHandle, seconds),
        requeue: (seconds) => runtime.queue.sendDelayed({ v: 1, jobId }, seconds),
      });
    } catch (error) {
      // The job store or queue failed under the job: the message comes back after its visibility timeout.
      logger.error('job processing failed unexpectedly; the message will return', {
        code: error instanceof DocrelayError ? error.code : 'INTERNAL',
        reason:
          error instanceof DocrelayError ? error.message : error instanceof Error ? error.name : 'unknown',
      });
      metrics.addMetric('WorkerErrors', MetricUnit.Count, 1);
      throw error;
    } finally {
      logger.removeKeys(['jobId']);
    }
    switch (outcome.kind) {
      case 'stored':
        metrics.addMetric('JobsStored', MetricUnit.Count, 1);
        metrics.addMetric('JobDuration', MetricUnit.Milliseconds, Date.now() - started);
        return;
      case 'failed':
        metrics.addMetric('JobsFailed', MetricUnit.Count, 1);
        await runtime.deadLetters.send([{ v: 1, jobId }], outcome.job?.error?.code);
        return;
      case 'skipped':
        // A duplicate or stale message (the job is final or gone). Counted, which also keeps Powertools from
        // warning about a batch without metrics on every such message.
        metrics.addMetric('MessagesSkipped', MetricUnit.Count, 1);
        return;
      case 'requeued':
        // A new message carries the job on (see processJob): this one is done.
        metrics.addMetric('JobRetries', MetricUnit.Count, 1);
        return;
      case 'retry':
        metrics.addMetric('JobRetries', MetricUnit.Count, 1);
        await runtime.queue.defer(record.receiptHandle, outcome.delaySeconds);
        throw new RetryLaterError(jobId, outcome.error.code);
    }
  };

  const handle = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
    processPartialResponse(event, handleRecord, processor, {
      context,
      processInParallel: false,
      throwOnFullBatchFailure: false,
    });

  return middy(handle)
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics));
}
