/**
 * The local stand-in for Lambda's SQS event source: `concurrency` lanes each receive a batch, hand it to the
 * worker handler as Lambda's SQS event, and delete the messages it did not report as failed. Visibility,
 * receive counts and the dead-letter queue are the queue emulator's own, as on AWS.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { localContext } from './lambda-context';

/** The worker handler as the poller calls it. */
export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/** Options of the poller. */
export interface PollerOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  readonly queueArn: string;
  readonly region: string;
  /**
   * The worker handler of one lane. Each lane gets its own (as each concurrent Lambda invocation runs in its
   * own container): Powertools keeps per-invocation state (log keys, the batch's failures) on the instance.
   */
  readonly handlerForLane: (lane: number) => SqsHandler;
  /** Lanes, each with one batch in flight: the cap on generations in flight (`service.maxConcurrency`). */
  readonly concurrency: number;
  /** Messages per batch. @default 1 */
  readonly batchSize?: number;
  /** Worker timeout handed to the handler's context. @default 300_000 */
  readonly timeoutMs?: number;
  readonly onError?: (error: unknown) => void;
}

/** How a poller stops. */
export interface PollerStopOptions {
  /**
   * Ends the receives in their long poll at once instead of waiting them out (up to 1 s). Only for a queue
   * that goes away too: the emulator does not notice a receive's client left, so a message arriving meanwhile
   * would stay invisible for its visibility timeout. @default false
   */
  readonly abortReceives?: boolean;
}

/** A running poller. */
export interface Poller {
  /**
   * Stops receiving and waits for the batches in flight. A receive that brings messages once stopping has begun
   * gives them back to the queue at once (visibility 0), for the next poller.
   */
  stop(options?: PollerStopOptions): Promise<void>;
  /** Batches handed to the worker so far. */
  readonly batches: () => number;
}

/** Builds the SQS event record Lambda would build for a received message. */
export function toSqsRecord(message: Message, queueArn: string, region: string): SQSRecord {
  const attributes = message.Attributes ?? {};
  const messageAttributes: SQSRecord['messageAttributes'] = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    messageAttributes[name] = {
      dataType: value.DataType ?? 'String',
      ...(value.StringValue === undefined ? {} : { stringValue: value.StringValue }),
    };
  }
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? '000000000000',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes,
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}

/** Starts polling. */
export function startPoller(options: PollerOptions): Poller {
  let running = true;
  let batches = 0;
  // Ends the receives waiting on an empty queue at once, when the queue goes too (PollerStopOptions).
  const stopping = new AbortController();
  const lanes: Promise<void>[] = [];
  // Deletes run beside the lane's next receive (as Lambda's event source deletes apart from its polling);
  // stop() waits for them.
  const deletes = new Set<Promise<void>>();
  const remove = (messages: readonly Message[]): void => {
    const deleting = options.sqs
      .send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
        }),
      )
      .then(
        () => undefined,
        (error: unknown) => options.onError?.(error),
      )
      .finally(() => deletes.delete(deleting));
    deletes.add(deleting);
  };
  const giveBack = async (messages: readonly Message[]): Promise<void> => {
    try {
      await options.sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: messages.map((m, i) => ({
            Id: String(i),
            ReceiptHandle: m.ReceiptHandle ?? '',
            VisibilityTimeout: 0,
          })),
        }),
      );
    } catch (error) {
      // They come back after their visibility timeout instead.
      options.onError?.(error);
    }
  };
  const lane = async (index: number): Promise<void> => {
    const handler = options.handlerForLane(index);
    while (running) {
      let messages: Message[];
      try {
        const received = await options.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: options.queueUrl,
            MaxNumberOfMessages: options.batchSize ?? 1,
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
          { abortSignal: stopping.signal },
        );
        messages = received.Messages ?? [];
      } catch (error) {
        if (!running) return;
        options.onError?.(error);
        await new Promise((resolve) => setTimeout(resolve, 500));
        continue;
      }
      if (messages.length === 0) continue;
      if (!running) {
        await giveBack(messages);
        return;
      }
      batches += 1;
      const event: SQSEvent = {
        Records: messages.map((m) => toSqsRecord(m, options.queueArn, options.region)),
      };
      let failed: Set<string>;
      try {
        const response = await handler(event, localContext(`worker-${index}`, options.timeoutMs ?? 300_000));
        failed = new Set((response?.batchItemFailures ?? []).map((item) => item.itemIdentifier));
      } catch (error) {
        // A handler that throws fails the whole batch: every message comes back after its visibility timeout.
        options.onError?.(error);
        continue;
      }
      const done = messages.filter((m) => !failed.has(m.MessageId ?? ''));
      if (done.length > 0) remove(done);
    }
  };
  for (let i = 0; i < options.concurrency; i += 1) lanes.push(lane(i));
  return {
    stop: async ({ abortReceives = false } = {}) => {
      running = false;
      if (abortReceives) stopping.abort();
      await Promise.all(lanes);
      await Promise.all([...deletes]);
    },
    batches: () => batches,
  };
}
