/** The jobs queue with its dead-letter queue, and the dead-letter queues of asynchronous invocations. */
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Queue, QueueEncryption, type QueueProps } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { acknowledge } from './nag';

/** How long a dead letter is kept: SQS's maximum, time for a person to look. */
const DEAD_LETTER_RETENTION = Duration.days(14);

/**
 * Receives SQS allows beyond the worker's own cap (`maxReceiveCount`) before it dead-letters a message. A
 * receive Lambda throttles counts too, so without headroom a job could be dead-lettered without ever running;
 * the worker fails or carries on a job at its own cap, so the redrive catches only messages it never settled.
 */
export const THROTTLED_RECEIVE_HEADROOM = 16;

/** Inputs of `buildJobQueues`. */
export interface JobQueuesOptions {
  /** The visibility timeout of the jobs queue (also a job's lease). */
  readonly visibilityTimeout: Duration;
  /** The worker's receive cap; SQS's redrive allows THROTTLED_RECEIVE_HEADROOM more. */
  readonly maxReceiveCount: number;
  readonly queueProps?: Partial<QueueProps>;
  readonly deadLetterQueueProps?: Partial<QueueProps>;
  readonly encryptionKey?: IKey;
  readonly removalPolicy: RemovalPolicy;
}

/** The jobs queue and its dead-letter queue. */
export interface JobQueues {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
}

/** Creates the jobs dead-letter queue, then the jobs queue that redrives into it after `maxReceiveCount` + headroom. */
export function buildJobQueues(scope: Construct, options: JobQueuesOptions): JobQueues {
  const key = options.encryptionKey;
  const encryption =
    key === undefined
      ? { encryption: QueueEncryption.SQS_MANAGED }
      : { encryption: QueueEncryption.KMS, encryptionMasterKey: key };
  const deadLetterQueue = new Queue(scope, 'JobsDeadLetters', {
    ...options.deadLetterQueueProps,
    ...encryption,
    enforceSSL: true,
    retentionPeriod: options.deadLetterQueueProps?.retentionPeriod ?? DEAD_LETTER_RETENTION,
    removalPolicy: options.removalPolicy,
  });
  const queue = new Queue(scope, 'JobsQueue', {
    ...options.queueProps,
    ...encryption,
    enforceSSL: true,
    visibilityTimeout: options.visibilityTimeout,
    deadLetterQueue: {
      queue: deadLetterQueue,
      maxReceiveCount: options.maxReceiveCount + THROTTLED_RECEIVE_HEADROOM,
    },
    removalPolicy: options.removalPolicy,
  });
  return { queue, deadLetterQueue };
}

/**
 * A dead-letter queue for an AWS service's failed deliveries (EventBridge targets, Lambda's asynchronous
 * invocations). SQS-managed SSE even with a customer key: those services write here, and a customer key
 * would need their service principals in its policy; what lands here is already on the bus or in the logs.
 */
export function buildServiceDeadLetterQueue(
  scope: Construct,
  id: string,
  of: string,
  removalPolicy: RemovalPolicy,
): Queue {
  const queue = new Queue(scope, id, {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: DEAD_LETTER_RETENTION,
    removalPolicy,
  });
  acknowledge(queue, 'AwsSolutions-SQS3', `This queue is itself a dead-letter queue: ${of}.`);
  return queue;
}
