/**
 * The jobs queue and its dead-letter queue on SQS: one message per job (job-message.ts), sent in batches of
 * ten; a message a worker must try again later is deferred by changing its visibility.
 */
import {
  ChangeMessageVisibilityCommand,
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { DocrelayError } from '../../commons/errors';
import type { DeadLetterQueue, JobQueue, JobQueueBacklog, QueueBacklog } from '../../ports/job-queue';
import { encodeJobMessage } from './job-message';

const unavailable = (message: string, cause?: unknown): DocrelayError =>
  new DocrelayError('QUEUE_UNAVAILABLE', message, {
    retryable: true,
    ...(cause === undefined ? {} : { cause }),
  });

/** An SQS queue of job messages: the jobs queue, or the dead-letter queue. */
export class SqsJobQueue implements JobQueue, JobQueueBacklog, DeadLetterQueue {
  constructor(
    private readonly sqs: SQSClient,
    readonly queueUrl: string,
  ) {}

  async send(jobIds: readonly string[]): Promise<void> {
    await this.sendBatches(jobIds);
  }

  async park(jobIds: readonly string[], reason: string): Promise<void> {
    await this.sendBatches(jobIds, reason);
  }

  async sendDelayed(jobId: string, delaySeconds: number): Promise<string> {
    let id: string | undefined;
    try {
      const result = await this.sqs.send(
        new SendMessageCommand({
          QueueUrl: this.queueUrl,
          MessageBody: encodeJobMessage(jobId),
          DelaySeconds: Math.max(0, Math.min(900, Math.round(delaySeconds))),
          MessageAttributes: { jobId: { DataType: 'String', StringValue: jobId } },
        }),
      );
      id = result.MessageId;
    } catch (error) {
      throw unavailable('the jobs queue did not accept the job', error);
    }
    if (id === undefined) throw unavailable('the jobs queue gave no message id');
    return id;
  }

  /** The queue's approximate counts (GetQueueAttributes: one request, allowed by a send grant). */
  async backlog(): Promise<QueueBacklog> {
    let attributes: Record<string, string>;
    try {
      const result = await this.sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: this.queueUrl,
          AttributeNames: [
            'ApproximateNumberOfMessages',
            'ApproximateNumberOfMessagesNotVisible',
            'ApproximateNumberOfMessagesDelayed',
          ],
        }),
      );
      attributes = result.Attributes ?? {};
    } catch (error) {
      throw unavailable('the jobs queue did not say how many messages it holds', error);
    }
    const count = (name: string): number => {
      const value = Number(attributes[name] ?? 0);
      return Number.isFinite(value) && value > 0 ? value : 0;
    };
    return {
      visible: count('ApproximateNumberOfMessages'),
      inFlight: count('ApproximateNumberOfMessagesNotVisible'),
      delayed: count('ApproximateNumberOfMessagesDelayed'),
    };
  }

  async parkRaw(body: string, reason: string): Promise<void> {
    await this.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.queueUrl,
        MessageBody: body === '' ? '(empty)' : body,
        MessageAttributes: { reason: { DataType: 'String', StringValue: reason } },
      }),
    );
  }

  /** Makes a received message visible again after `seconds` (0..43200), for a later retry. */
  async defer(receiptHandle: string, seconds: number): Promise<void> {
    await this.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: this.queueUrl,
        ReceiptHandle: receiptHandle,
        VisibilityTimeout: Math.max(0, Math.min(43_200, Math.round(seconds))),
      }),
    );
  }

  /** Sends one message per job (batches of ten, a reason attribute if given); throws unless all went. */
  private async sendBatches(jobIds: readonly string[], reason?: string): Promise<void> {
    for (let start = 0; start < jobIds.length; start += 10) {
      const batch = jobIds.slice(start, start + 10);
      let failed: number;
      try {
        const result = await this.sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: this.queueUrl,
            Entries: batch.map((jobId, i) => ({
              Id: String(i),
              MessageBody: encodeJobMessage(jobId),
              MessageAttributes: {
                jobId: { DataType: 'String', StringValue: jobId },
                ...(reason === undefined ? {} : { reason: { DataType: 'String', StringValue: reason } }),
              },
            })),
          }),
        );
        failed = result.Failed?.length ?? 0;
      } catch (error) {
        throw unavailable('the jobs queue did not accept the jobs', error);
      }
      if (failed > 0) throw unavailable(`the jobs queue refused ${failed} of ${batch.length} jobs`);
    }
  }
}
