/** dlq redrive on AWS: the SQS move task names the jobs queue as its destination, both ARNs read from SQS. */
import { GetQueueAttributesCommand, type SQSClient, StartMessageMoveTaskCommand } from '@aws-sdk/client-sqs';
import { startMoveTask } from '../../../../bin/commands/dlq';
import { CliError } from '../../../../bin/commands/types';

const JOBS_URL = 'https://sqs.eu-west-1.amazonaws.com/111122223333/docrelay-jobs';
const DLQ_URL = 'https://sqs.eu-west-1.amazonaws.com/111122223333/docrelay-jobs-dlq';
const ARNS: Record<string, string> = {
  [JOBS_URL]: 'arn:aws:sqs:eu-west-1:111122223333:docrelay-jobs',
  [DLQ_URL]: 'arn:aws:sqs:eu-west-1:111122223333:docrelay-jobs-dlq',
};

/** An SQS client that answers QueueArn lookups from ARNS and records the move tasks asked for. */
function fakeSqs(arns: Record<string, string> = ARNS) {
  const started: unknown[] = [];
  const sqs = {
    send: async (command: unknown) => {
      if (command instanceof GetQueueAttributesCommand) {
        const arn = arns[command.input.QueueUrl ?? ''];
        return { Attributes: arn === undefined ? {} : { QueueArn: arn } };
      }
      if (command instanceof StartMessageMoveTaskCommand) {
        started.push(command.input);
        return { TaskHandle: 'task-1' };
      }
      throw new Error(`unexpected command ${(command as object).constructor.name}`);
    },
  } as unknown as Pick<SQSClient, 'send'>;
  return { sqs, started };
}

describe('startMoveTask', () => {
  it('moves from the dead-letter queue to the jobs queue, named as DestinationArn', async () => {
    const { sqs, started } = fakeSqs();
    await expect(startMoveTask(sqs, DLQ_URL, JOBS_URL)).resolves.toEqual({ TaskHandle: 'task-1' });
    expect(started).toEqual([
      {
        SourceArn: 'arn:aws:sqs:eu-west-1:111122223333:docrelay-jobs-dlq',
        DestinationArn: 'arn:aws:sqs:eu-west-1:111122223333:docrelay-jobs',
      },
    ]);
  });

  it('starts no task when the jobs queue ARN cannot be read', async () => {
    const { sqs, started } = fakeSqs({ [DLQ_URL]: ARNS[DLQ_URL] as string });
    const attempt = startMoveTask(sqs, DLQ_URL, JOBS_URL);
    await expect(attempt).rejects.toBeInstanceOf(CliError);
    await expect(attempt).rejects.toThrow(`cannot read the ARN of queue ${JOBS_URL}`);
    expect(started).toEqual([]);
  });
});
