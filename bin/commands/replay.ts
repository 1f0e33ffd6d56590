/**
 * `docrelay replay <jobId> [--fresh]`: resets a failed job in the table and queues it, from its last
 * checkpoint or, with --fresh, from the start (a stored job too). Open jobs are refused: they are running.
 * With --fresh it follows the job to stored and says which previous files the worker removed.
 */

import { DynamoJobRepository } from '../../functions/adapters/dynamodb/job-table';
import { SqsJobQueue } from '../../functions/adapters/sqs/job-queue';
import { JobConflictError } from '../../functions/core/errors';
import { ReplayRefusedError, replayRefusal, resetJobForReplay } from '../../functions/core/replay';
import { removeJobDeadLetters } from './dlq';
import { waitForJobs } from './follow';
import { firstLine } from './ops-args';
import { resolveStackTarget, type StackTarget } from './stack-target';
import { CliError, type CommandContext } from './types';

/** How long `replay --fresh` follows the job (the worker removes the previous files whenever it is stored). */
const FRESH_WAIT_MS = 120_000;

/** Resets the job and queues it; resolves to the exit code. */
export async function replay(
  ctx: CommandContext,
  jobId: string,
  values: { fresh?: boolean; timeoutMs?: number },
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
    // Before the send, so that nothing this run parks can be taken for an old message.
    const removal = await removeFromDeadLetterQueue(target, jobId);
    // After the reset: should this send fail, the renewed lease lets the reconciler send the job later.
    await new SqsJobQueue(target.clients.sqs, target.queueUrl).send([jobId]);
    const from = fresh
      ? 'from the start: a new document will be generated'
      : reset.status === 'created'
        ? 'from its document: the files will be copied'
        : 'from its last checkpoint';
    ctx.stdout.write(`job ${jobId}: ${job.status} -> ${reset.status} (replay ${from})\n`);
    if (removal.stdout !== undefined) ctx.stdout.write(`${removal.stdout}\n`);
    if (removal.stderr !== undefined) ctx.stderr.write(`docrelay replay: ${removal.stderr}\n`);
    const previous = job.files.filter((file) => file.bucket !== undefined && file.key !== undefined);
    if (!fresh || previous.length === 0) return 0;
    // The worker deletes the previous files the new run did not overwrite, once the new ones are stored.
    const outcome = await waitForJobs(ctx, [jobId], {
      timeoutMs: values.timeoutMs ?? FRESH_WAIT_MS,
      pollMs: 500,
    });
    const after = await new DynamoJobRepository(target.clients.dynamodb, target.tableName).getJob(jobId);
    if (outcome !== 0 || after?.status !== 'stored') {
      ctx.stdout.write(
        `job ${jobId} did not end stored: its previous files stay until a run of it is stored\n`,
      );
      return 1;
    }
    // The worker forgets the files it removed: those it could not remove are still listed in replacedFiles.
    const kept = new Set(after.files.map((file) => `${file.bucket}/${file.key}`));
    const left = new Set((after.replacedFiles ?? []).map((file) => `${file.bucket}/${file.key}`));
    for (const file of previous) {
      const name = `${file.bucket}/${file.key}`;
      if (kept.has(name)) continue;
      ctx.stdout.write(
        left.has(name)
          ? `the previous s3://${name} is still there: the worker could not remove it (see its log)\n`
          : `removed the previous s3://${name}\n`,
      );
    }
    return 0;
  } finally {
    target.close();
  }
}

/**
 * The replayed job's messages leave the dead-letter queue: the job no longer needs a person (should this run
 * fail, the worker parks it again), and the queue's alarm clears once nothing else waits there. Best effort:
 * the replay happens whatever this finds, and `dlq redrive` removes what is left. Resolves to what to print.
 */
async function removeFromDeadLetterQueue(
  target: StackTarget,
  jobId: string,
): Promise<{ stdout?: string; stderr?: string }> {
  try {
    const { removed, complete } = await removeJobDeadLetters(target.clients.sqs, target.dlqUrl, jobId);
    if (removed > 0) {
      return {
        stdout: `removed ${removed === 1 ? 'its message' : `its ${removed} messages`} from the dead-letter queue`,
      };
    }
    return complete
      ? {}
      : {
          stdout:
            'the dead-letter queue holds more messages than one look reads: any of this job there stay until `docrelay dlq redrive`',
        };
  } catch (error) {
    return {
      stderr: `could not look in the dead-letter queue (${firstLine(error)}); \`docrelay dlq redrive\` removes this job's messages once it is stored`,
    };
  }
}
