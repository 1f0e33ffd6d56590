/**
 * The worker Lambda: an SQS batch, one job per message in turn, so generations in flight stay within the
 * event source's concurrency (`service.maxConcurrency`). A message to retry is deferred and reported as a
 * batch item failure; a job failed for good is parked in the dead-letter queue with its reason.
 */
import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { decodeJobMessage, InvalidJobMessageError } from '../../adapters/sqs/job-message';
import { DocrelayError } from '../../commons/errors';
import { type Observability, traced } from '../../commons/observability';
import { type EventFollowUp, type JobOutcome, processJob, type WorkerDeps } from '../../core/process-job';
import type { DeadLetterQueue, JobQueue } from '../../ports/job-queue';

/** What the worker handler needs: the core's dependencies, and the queues its messages come from and go to. */
export interface WorkerHandlerDeps {
  readonly worker: Omit<WorkerDeps, 'log'>;
  /** The jobs queue: a new message to wait out an outage, and deferring a received one. */
  readonly queue: Pick<JobQueue, 'sendDelayed'> & {
    defer(receiptHandle: string, seconds: number): Promise<void>;
  };
  readonly deadLetters: DeadLetterQueue;
}

/** A message to try again later: reported to SQS as a batch item failure. */
export class RetryLaterError extends DocrelayError {
  override name = 'RetryLaterError';
  constructor(jobId: string, code: string) {
    super('RETRY_LATER', `job ${jobId} will be retried (${code})`, { retryable: true });
  }
}

/** Builds the worker handler (the Lambda entry and the local stack's poller call this alike). */
export function makeWorkerHandler(deps: WorkerHandlerDeps, observability: Observability) {
  const { logger, metrics } = observability;
  const worker: WorkerDeps = { ...deps.worker, log: logger };
  const processor = new BatchProcessor(EventType.SQS);

  const handleRecord = async (record: SQSRecord): Promise<void> => {
    let jobId: string;
    try {
      jobId = decodeJobMessage(record.body);
    } catch (error) {
      if (!(error instanceof InvalidJobMessageError)) throw error;
      // Poison: it can never succeed. Park it in the dead-letter queue for a person to look at.
      logger.error('invalid job message sent to the dead-letter queue', {
        messageId: record.messageId,
        reason: error.message,
      });
      await deps.deadLetters.parkRaw(record.body, error.code);
      metrics.addMetric('PoisonMessages', MetricUnit.Count, 1);
      return;
    }
    logger.appendKeys({ jobId });
    const started = Date.now();
    let outcome: JobOutcome;
    try {
      outcome = await processJob(worker, jobId, {
        messageId: record.messageId,
        receiveCount: Number(record.attributes.ApproximateReceiveCount) || 1,
        extendVisibility: (seconds) => deps.queue.defer(record.receiptHandle, seconds),
        requeue: (seconds) => deps.queue.sendDelayed(jobId, seconds),
      });
    } catch (error) {
      // The job table or queue failed under the job: the message comes back after its visibility timeout.
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
        return settleEvent(record, jobId, outcome);
      case 'failed':
        metrics.addMetric('JobsFailed', MetricUnit.Count, 1);
        await deps.deadLetters.park([jobId], outcome.job?.error?.code ?? 'FAILED');
        return settleEvent(record, jobId, outcome);
      case 'skipped':
        // A duplicate or stale message (the job is final or gone). Counted, which also keeps Powertools from
        // warning about a batch without metrics on every such message.
        metrics.addMetric('MessagesSkipped', MetricUnit.Count, 1);
        // The message that failed the job, back: its parking may be what failed, so it is parked again and
        // the alarm fires for every failed job. A second entry is harmless: the worker skips its redrive.
        if (outcome.settledByThis === true && outcome.job?.status === 'failed')
          await deps.deadLetters.park([jobId], outcome.job.error?.code ?? 'FAILED');
        return settleEvent(record, jobId, outcome);
      case 'requeued':
        // A new message carries the job on (see processJob): this one is done.
        metrics.addMetric('JobRetries', MetricUnit.Count, 1);
        return;
      case 'retry':
        metrics.addMetric('JobRetries', MetricUnit.Count, 1);
        await deps.queue.defer(record.receiptHandle, outcome.delaySeconds);
        throw new RetryLaterError(jobId, outcome.error.code);
    }
  };

  /**
   * A settled job whose event did not go out: its message is kept (deferred) and publishes it when it comes
   * back, or, with no receive left, the loss is counted (`EventsNotPublished`, alarmed on AWS).
   */
  const settleEvent = async (record: SQSRecord, jobId: string, outcome: EventFollowUp): Promise<void> => {
    if (outcome.eventLost === true) metrics.addMetric('EventsNotPublished', MetricUnit.Count, 1);
    if (outcome.eventRetrySeconds === undefined) return;
    metrics.addMetric('EventRetries', MetricUnit.Count, 1);
    await deps.queue.defer(record.receiptHandle, outcome.eventRetrySeconds);
    throw new RetryLaterError(jobId, 'EVENT_NOT_PUBLISHED');
  };

  const handle = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
    processPartialResponse(event, handleRecord, processor, {
      context,
      processInParallel: false,
      throwOnFullBatchFailure: false,
    });

  return middy(handle)
    .use(traced(observability))
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics));
}
