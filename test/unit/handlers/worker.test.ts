/** The worker entry point: SQS batches over the in-memory core, with partial batch responses. */
import { InMemoryJobQueue } from '../../../functions/adapters/memory/job-queue';
import { encodeJobMessage } from '../../../functions/adapters/sqs/job-message';
import { DocrelayError } from '../../../functions/commons/errors';
import { acceptWebhook } from '../../../functions/core/accept-delivery';
import { MAX_COPY_RETRIES_PER_ATTEMPT } from '../../../functions/core/retry-policy';
import { DocgenBadRequestError, DocgenUnavailableError } from '../../../functions/docgen/errors';
import { makeWorkerHandler } from '../../../functions/handlers/worker/make-handler';
import { memoryBench, signedWebhook } from '../core/support';
import { lambdaContext, recordingObservability, sqsEvent, sqsRecord } from './support';

/** Copy failures that outlast the retries within one attempt. */
const COPY_FAILURES = MAX_COPY_RETRIES_PER_ATTEMPT + 1;

/** The jobs queue in memory, with the visibility changes a worker asks for. */
class DeferringQueue extends InMemoryJobQueue {
  readonly deferred: Array<{ receiptHandle: string; seconds: number }> = [];

  async defer(receiptHandle: string, seconds: number): Promise<void> {
    this.deferred.push({ receiptHandle, seconds });
  }
}

async function setup() {
  const bench = memoryBench();
  const queue = new DeferringQueue();
  const deadLetters = new InMemoryJobQueue();
  const observability = recordingObservability('worker');
  const handler = makeWorkerHandler({ worker: bench.worker, queue, deadLetters }, observability);
  const accepted = await acceptWebhook(
    bench.ingest,
    signedWebhook('notes', { id: 'n-1', customer: 'Ada', number: '42' }),
  );
  const jobId = accepted.body.jobs[0]?.jobId as string;
  const run = (...records: ReturnType<typeof sqsRecord>[]) =>
    handler(sqsEvent(...records), lambdaContext('docrelay-worker'));
  return { bench, queue, deadLetters, observability, jobId, run };
}

describe('worker handler', () => {
  it('stores the job a message names, and counts it with its duration', async () => {
    const { bench, observability, jobId, run } = await setup();
    await expect(run(sqsRecord('m-1', encodeJobMessage(jobId)))).resolves.toEqual({ batchItemFailures: [] });
    expect(await bench.jobs.getJob(jobId)).toMatchObject({ status: 'stored' });
    expect(bench.store.objects.size).toBe(1);
    expect(observability.metricNames()).toEqual(['JobsStored', 'JobDuration']);
    expect(observability.points[1]).toMatchObject({ unit: 'Milliseconds' });
  });

  it('parks a poison message as it came, with its code, and deletes it', async () => {
    const { deadLetters, observability, run } = await setup();
    await expect(run(sqsRecord('m-1', '{"v":9}'))).resolves.toEqual({ batchItemFailures: [] });
    expect(deadLetters.messages).toEqual([
      expect.objectContaining({ body: '{"v":9}', reason: 'INVALID_JOB_MESSAGE' }),
    ]);
    expect(observability.lines).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: 'invalid job message sent to the dead-letter queue',
      }),
    );
    expect(observability.metricNames()).toEqual(['PoisonMessages']);
  });

  it('parks a job that failed for good with its error code', async () => {
    const { bench, deadLetters, observability, jobId, run } = await setup();
    bench.service.failCreate(new DocgenBadRequestError('the service refused the data'));
    await expect(run(sqsRecord('m-1', encodeJobMessage(jobId)))).resolves.toEqual({ batchItemFailures: [] });
    expect(deadLetters.messages).toEqual([expect.objectContaining({ jobId, reason: 'DOCGEN_BAD_REQUEST' })]);
    expect(observability.metricNames()).toEqual(['JobsFailed']);
  });

  it('defers a message to retry by its backoff and reports it as a batch item failure', async () => {
    const { bench, queue, observability, jobId, run } = await setup();
    bench.store.failNext(
      new DocrelayError('STORAGE_WRITE_FAILED', 'down', { retryable: true }),
      COPY_FAILURES,
    );
    const response = await run(sqsRecord('m-1', encodeJobMessage(jobId)));
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-1' }] });
    expect(queue.deferred).toEqual([{ receiptHandle: 'receipt-m-1', seconds: expect.any(Number) }]);
    expect(queue.deferred[0]?.seconds).toBeGreaterThan(0);
    expect(observability.metricNames()).toEqual(['JobRetries']);
    expect(await bench.jobs.getJob(jobId)).toMatchObject({
      // The document was generated: the retry resumes from that checkpoint.
      status: 'created',
      lastError: { code: 'STORAGE_WRITE_FAILED' },
    });
  });

  it('keeps the message of a stored job whose event failed (batch item failure), and its return publishes it', async () => {
    const { bench, queue, observability, jobId, run } = await setup();
    bench.events.failNext(new Error('ThrottlingException'));
    const response = await run(sqsRecord('m-1', encodeJobMessage(jobId)));
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-1' }] });
    expect(queue.deferred).toEqual([{ receiptHandle: 'receipt-m-1', seconds: 5 }]);
    expect(observability.metricNames()).toEqual(['JobsStored', 'JobDuration', 'EventRetries']);
    expect(await bench.jobs.getJob(jobId)).toMatchObject({ status: 'stored' });

    await expect(run(sqsRecord('m-1', encodeJobMessage(jobId), 2))).resolves.toEqual({
      batchItemFailures: [],
    });
    expect(bench.events.events.map((e) => e.type)).toEqual(['Document Stored']);
  });

  it('parks a failed job when parking failed the first time and its message comes back', async () => {
    const { bench, deadLetters, jobId, run } = await setup();
    bench.service.failCreate(new DocgenBadRequestError('the service refused the data'));
    const park = jest.spyOn(deadLetters, 'park').mockRejectedValueOnce(new Error('SQS unavailable'));
    const first = await run(sqsRecord('m-1', encodeJobMessage(jobId)));
    expect(first).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-1' }] });
    expect(deadLetters.messages).toEqual([]);

    await expect(run(sqsRecord('m-1', encodeJobMessage(jobId), 2))).resolves.toEqual({
      batchItemFailures: [],
    });
    expect(deadLetters.messages).toEqual([expect.objectContaining({ jobId, reason: 'DOCGEN_BAD_REQUEST' })]);
    // Another message for the failed job parks nothing.
    await run(sqsRecord('m-2', encodeJobMessage(jobId)));
    expect(deadLetters.messages).toHaveLength(1);
    expect(park).toHaveBeenCalledTimes(2);
  });

  it('counts an event given up at the message’s last receive, and deletes the message', async () => {
    const { bench, observability, jobId, run } = await setup();
    for (let i = 0; i < 2; i += 1) bench.events.failNext(new Error('AccessDeniedException'));
    await run(sqsRecord('m-1', encodeJobMessage(jobId)));
    const response = await run(sqsRecord('m-1', encodeJobMessage(jobId), 3));
    expect(response).toEqual({ batchItemFailures: [] });
    expect(observability.metricNames()).toContain('EventsNotPublished');
    expect(bench.events.events).toEqual([]);
  });

  it('sends a new delayed message to wait out an outage at the last receive, and deletes this one', async () => {
    const { bench, queue, jobId, observability, run } = await setup();
    bench.service.failCreate(new DocgenUnavailableError('503'));
    const response = await run(sqsRecord('m-1', encodeJobMessage(jobId), 3));
    expect(response).toEqual({ batchItemFailures: [] });
    expect(queue.messages).toEqual([expect.objectContaining({ jobId, delaySeconds: expect.any(Number) })]);
    expect(queue.deferred).toEqual([]);
    expect(observability.metricNames()).toEqual(['JobRetries']);
  });

  it('drops a message for a job that does not exist, counting it as skipped', async () => {
    const { observability, run } = await setup();
    await expect(run(sqsRecord('m-1', encodeJobMessage('no-such-job')))).resolves.toEqual({
      batchItemFailures: [],
    });
    expect(observability.metricNames()).toEqual(['MessagesSkipped']);
  });

  it('lets the message return when the table fails under the job, logging the code only', async () => {
    const { bench, observability, jobId, run } = await setup();
    bench.jobs.failNext(
      'claimJob',
      new DocrelayError('JOB_STORE_UNAVAILABLE', 'the job table could not claim a job', { retryable: true }),
    );
    const response = await run(sqsRecord('m-1', encodeJobMessage(jobId)));
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-1' }] });
    expect(observability.lines).toContainEqual({
      level: 'error',
      message: 'job processing failed unexpectedly; the message will return',
      fields: { code: 'JOB_STORE_UNAVAILABLE', reason: 'the job table could not claim a job' },
    });
    expect(observability.metricNames()).toEqual(['WorkerErrors']);
  });

  it('names only the error class of an unexpected non-docrelay error', async () => {
    const { bench, observability, jobId, run } = await setup();
    bench.jobs.failNext('claimJob', new RangeError('secret internals'));
    await run(sqsRecord('m-1', encodeJobMessage(jobId)));
    expect(observability.lines).toContainEqual(
      expect.objectContaining({ fields: { code: 'INTERNAL', reason: 'RangeError' } }),
    );
  });

  it('processes a batch one message after another and reports only the failures', async () => {
    const { bench, jobId, run } = await setup();
    bench.store.failNext(
      new DocrelayError('STORAGE_WRITE_FAILED', 'down', { retryable: true }),
      COPY_FAILURES,
    );
    const response = await run(
      sqsRecord('m-1', 'not json'),
      sqsRecord('m-2', encodeJobMessage(jobId)),
      sqsRecord('m-3', encodeJobMessage('no-such-job')),
    );
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-2' }] });
  });
});
