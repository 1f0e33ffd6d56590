/**
 * Taking one job's messages out of the dead-letter queue, for the console's replay and redrive buttons, as
 * `docrelay replay` and `docrelay dlq` do (bin/commands/dlq.ts: a bounded peek, the job's messages deleted,
 * every other message handed back at once).
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { removeJobDeadLetters } from '../../bin/commands/dlq';

/** A dead-letter queue the console can take a job's messages out of. */
export function sqsDeadLetters(sqs: SQSClient, dlqUrl: string): { remove(jobId: string): Promise<number> } {
  return {
    remove: async (jobId) => (await removeJobDeadLetters(sqs, dlqUrl, jobId)).removed,
  };
}
