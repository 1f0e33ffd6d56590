/**
 * The jobs queue and its dead-letter queue on SQS: one message per job (job-message.ts), sent in batches of
 * ten; a message a worker must try again later is deferred by changing its visibility. Sends made at the same
 * time share a batch (`send` below).
 */
import {
  ChangeMessageVisibilityCommand,
  GetQueueAttributesCommand,
  SendMessageBatchCommand,
  type SendMessageBatchCommandOutput,
  type SendMessageBatchRequestEntry,
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

/** SQS's limit of messages per SendMessageBatch. */
const BATCH_SIZE = 10;

/** A send waiting for its group's SendMessageBatch. */
interface WaitingSend {
  readonly jobIds: readonly string[];
  readonly resolve: () => void;
  readonly reject: (error: DocrelayError) => void;
}

/** An SQS queue of job messages: the jobs queue, or the dead-letter queue. */
export class SqsJobQueue implements JobQueue, JobQueueBacklog, DeadLetterQueue {
  /** The sends of the current turn of the event loop, and how many messages they hold. */
  private group: WaitingSend[] = [];
  private groupSize = 0;

  constructor(
    private readonly sqs: SQSClient,
    readonly queueUrl: string,
  ) {}

  /**
   * Sends one message per job. Sends made in one event-loop turn (concurrent acknowledgements in the local API)
   * share SendMessageBatch calls of up to ten, in order, sent at the turn's end; each send fails only if its batch
   * failed or SQS refused one of its own messages. In Lambda a group holds one send.
   */
  send(jobIds: readonly string[]): Promise<void> {
    if (jobIds.length === 0) return Promise.resolve();
    if (jobIds.length > BATCH_SIZE) return this.sendBatches(jobIds);
    return new Promise<void>((resolve, reject) => {
      if (this.groupSize + jobIds.length > BATCH_SIZE) this.sendGroup();
      if (this.group.length === 0) setImmediate(() => this.sendGroup());
      this.group.push({ jobIds, resolve, reject });
      this.groupSize += jobIds.length;
    });
  }

  /** Sends the waiting group as one SendMessageBatch (settleGroup settles each of its sends). */
  private sendGroup(): void {
    const group = this.group;
    if (group.length === 0) return;
    this.group = [];
    this.groupSize = 0;
    void this.settleGroup(group);
  }

  /** Never rejects: each send of the group is resolved or rejected with its own outcome. */
  private async settleGroup(group: readonly WaitingSend[]): Promise<void> {
    let failed: NonNullable<SendMessageBatchCommandOutput['Failed']>;
    try {
      const jobIds = group.flatMap((send) => send.jobIds);
      const result = await this.sqs.send(
        new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: this.entries(jobIds) }),
      );
      failed = result.Failed ?? [];
    } catch (error) {
      for (const send of group) send.reject(unavailable('the jobs queue did not accept the jobs', error));
      return;
    }
    const owners = group.flatMap((send) => send.jobIds.map(() => send));
    const refused = new Map<WaitingSend, number>();
    for (const failure of failed) {
      const owner = owners[Number(failure.Id)];
      // An id that is not one of ours: nobody's messages can be trusted to have gone.
      if (owner === undefined) for (const send of group) refused.set(send, send.jobIds.length);
      else refused.set(owner, (refused.get(owner) ?? 0) + 1);
    }
    for (const send of group) {
      const count = Math.min(refused.get(send) ?? 0, send.jobIds.length);
      if (count === 0) send.resolve();
      else send.reject(unavailable(`the jobs queue refused ${count} of ${send.jobIds.length} jobs`));
    }
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

  /** The entries of one SendMessageBatch: ids are the positions, a reason attribute if given. */
  private entries(jobIds: readonly string[], reason?: string): SendMessageBatchRequestEntry[] {
    return jobIds.map((jobId, i) => ({
      Id: String(i),
      MessageBody: encodeJobMessage(jobId),
      MessageAttributes: {
        jobId: { DataType: 'String', StringValue: jobId },
        ...(reason === undefined ? {} : { reason: { DataType: 'String', StringValue: reason } }),
      },
    }));
  }

  /** Sends one message per job (batches of ten, in order); throws unless all went. */
  private async sendBatches(jobIds: readonly string[], reason?: string): Promise<void> {
    for (let start = 0; start < jobIds.length; start += BATCH_SIZE) {
      const batch = jobIds.slice(start, start + BATCH_SIZE);
      let failed: number;
      try {
        const result = await this.sqs.send(
          new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: this.entries(batch, reason) }),
        );
        failed = result.Failed?.length ?? 0;
      } catch (error) {
        throw unavailable('the jobs queue did not accept the jobs', error);
      }
      if (failed > 0) throw unavailable(`the jobs queue refused ${failed} of ${batch.length} jobs`);
    }
  }
}
