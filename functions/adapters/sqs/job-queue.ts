/** Sends job messages to the jobs queue (SQS), and defers the ones a worker must try again later. */
import {
  ChangeMessageVisibilityCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { DocrelayError } from '../../commons/errors';
import type { JobMessage } from './job-message';

/** The jobs queue. */
export class JobQueue {
  constructor(
    private readonly sqs: SQSClient,
    readonly queueUrl: string,
  ) {}

  /** Sends the messages (batches of ten); throws unless every one was accepted. */
  async send(messages: readonly JobMessage[], reason?: string): Promise<void> {
    for (let start = 0; start < messages.length; start += 10) {
      const batch = messages.slice(start, start + 10);
      let failed: number;
      try {
        const result = await this.sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: this.queueUrl,
            Entries: batch.map((message, i) => ({
              Id: String(i),
              MessageBody: JSON.stringify(message),
              MessageAttributes: {
                jobId: { DataType: 'String', StringValue: message.jobId },
                ...(reason === undefined ? {} : { reason: { DataType: 'String', StringValue: reason } }),
              },
            })),
          }),
        );
        failed = result.Failed?.length ?? 0;
      } catch (error) {
        throw new DocrelayError('QUEUE_UNAVAILABLE', 'the jobs queue did not accept the jobs', {
          retryable: true,
          cause: error,
        });
      }
      if (failed > 0) {
        throw new DocrelayError(
          'QUEUE_UNAVAILABLE',
          `the jobs queue refused ${failed} of ${batch.length} jobs`,
          {
            retryable: true,
          },
        );
      }
    }
  }

  /**
   * Sends one message that becomes visible after `delaySeconds` (0..900) and returns its id. A fresh message
   * starts its receive count over: the worker sends one to wait out a service outage (see process-job.ts).
   */
  async sendDelayed(message: JobMessage, delaySeconds: number): Promise<string> {
    let id: string | undefined;
    try {
      const result = await this.sqs.send(
        new SendMessageCommand({
          QueueUrl: this.queueUrl,
          MessageBody: JSON.stringify(message),
          DelaySeconds: Math.max(0, Math.min(900, Math.round(delaySeconds))),
          MessageAttributes: { jobId: { DataType: 'String', StringValue: message.jobId } },
        }),
      );
      id = result.MessageId;
    } catch (error) {
      throw new DocrelayError('QUEUE_UNAVAILABLE', 'the jobs queue did not accept the job', {
        retryable: true,
        cause: error,
      });
    }
    if (id === undefined) {
      throw new DocrelayError('QUEUE_UNAVAILABLE', 'the jobs queue gave no message id', { retryable: true });
    }
    return id;
  }

  /** Sends a message body as it is (a poison message parked in the dead-letter queue), with a reason. */
  async sendRaw(body: string, reason: string): Promise<void> {
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
}
