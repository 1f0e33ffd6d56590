/**
 * Taking one job's messages out of the dead-letter queue, for the console's redrive button: the queue is
 * peeked as `docrelay dlq` peeks it (bounded, short hold), the job's messages are deleted and every other
 * message is handed back at once.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { peekQueue } from '../../bin/commands/dlq';

/** Messages looked at per removal. */
const MAX_PEEK = 200;

/** A dead-letter queue the console can take a job's messages out of. */
export function sqsDeadLetters(sqs: SQSClient, dlqUrl: string): { remove(jobId: string): Promise<number> } {
  return {
    async remove(jobId) {
      const peek = await peekQueue(sqs, dlqUrl, {
        max: MAX_PEEK,
        holdSeconds: 10,
        waitSeconds: 0,
        budgetMs: 10_000,
      });
      const mine = peek.messages.filter((message) => message.jobId === jobId);
      const others = peek.messages.filter((message) => message.jobId !== jobId);
      for (const message of mine) {
        await sqs.send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: message.receiptHandle }));
      }
      for (let start = 0; start < others.length; start += 10) {
        await sqs
          .send(
            new ChangeMessageVisibilityBatchCommand({
              QueueUrl: dlqUrl,
              Entries: others.slice(start, start + 10).map((message, i) => ({
                Id: String(i),
                ReceiptHandle: message.receiptHandle,
                VisibilityTimeout: 0,
              })),
            }),
          )
          .catch(() => undefined);
      }
      return mine.length;
    },
  };
}
