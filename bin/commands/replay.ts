/**
 * `docrelay replay <jobId> [--fresh]`: runs a failed job again from its last checkpoint, or from the start with
 * --fresh (a new document); --fresh also regenerates a stored job. Open jobs are refused: they are running.
 * The job is reset in the table, then its message is sent to the jobs queue.
 */

import { DynamoJobRepository } from '../../functions/adapters/dynamodb/job-table';
import { SqsJobQueue } from '../../functions/adapters/sqs/job-queue';
import { JobConflictError } from '../../functions/core/errors';
import { ReplayRefusedError, replayRefusal, resetJobForReplay } from '../../functions/core/replay';
import { resolveStackTarget } from './stack-target';
import { CliError, type CommandContext } from './types';

/** Resets the job and queues it; resolves to the exit code. */
export async function replay(
  ctx: CommandContext,
  jobId: string,
  values: { fresh?: boolean },
): Promise<number> {
  if (!/^[A-Za-z0-9-]{1,64}$/.test(jobId)) throw new CliError(`no job ${jobId}`);
  const fresh = values.fresh === true;

  const target = await resolveStackTarget(ctx);
  try {
    const store = new DynamoJobRepository(target.clients.dynamodb, target.tableName);
    const job = await store.getJob(jobId);
    if (job === undefined) throw new CliError(`no job ${jobId}`);
    const refusal = replayRefusal(job, { fresh });
    if (refusal !== undefined) throw new CliError(refusal);
    let reset: Awaited<ReturnType<typeof resetJobForReplay>>;
    try {
      reset = await resetJobForReplay(store, job, { fresh });
    } catch (error) {
      if (error instanceof JobConflictError) {
        throw new CliError(`job ${jobId} changed while it was being reset; run replay again`);
      }
      if (error instanceof ReplayRefusedError) throw new CliError(error.message);
      throw error;
    }
    // After the reset: should this send fail, the renewed lease lets the reconciler send the job later.
    await new SqsJobQueue(target.clients.sqs, target.queueUrl).send([jobId]);
    const from = fresh
      ? 'from the start: a new document will be generated'
      : reset.status === 'created'
        ? 'from its document: the files will be copied'
        : 'from its last checkpoint';
    ctx.stdout.write(`job ${jobId}: ${job.status} -> ${reset.status} (replay ${from})\n`);
    return 0;
  } finally {
    target.close();
  }
}
