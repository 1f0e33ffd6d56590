/**
 * `docrelay dlq list [--json] [--max N]` and `dlq redrive [--max N]`: the jobs' dead-letter queue with each
 * job's state, and sending it back. A peek hands back what it holds at once; redrive resets failed jobs as
 * replay does, then uses SQS's move task when it saw the whole queue on AWS, else moves message by message.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { DynamoJobRepository } from '../../functions/adapters/dynamodb/job-table';
import { decodeJobMessage } from '../../functions/adapters/sqs/job-message';
import { SqsJobQueue } from '../../functions/adapters/sqs/job-queue';
import { JobConflictError } from '../../functions/core/errors';
import type { JobRecord } from '../../functions/core/job';
import { resetJobForReplay } from '../../functions/core/replay';
import { firstLine } from './ops-args';
import { resolveStackTarget, type StackTarget } from './stack-target';
import { CliError, type CommandContext } from './types';

/** Seconds a received message stays hidden, should the CLI die before handing it back. */
const LIST_HOLD_SECONDS = 10;
const REDRIVE_HOLD_SECONDS = 60;
/** Time budget of one peek. */
const PEEK_BUDGET_MS = 60_000;

/** A message of the dead-letter queue as received. */
export interface PeekedMessage {
  readonly messageId: string;
  receiptHandle: string;
  readonly body: string;
  /** Why it was dead-lettered (the `reason` attribute the worker sets; absent when SQS moved it). */
  readonly reason?: string;
  /** The job it names, when it is a job message. */
  readonly jobId?: string;
  /** Why it is not a job message. */
  readonly invalid?: string;
  readonly receiveCount?: number;
  readonly sentAt?: string;
}

/** What a peek saw: up to `max` messages, and whether that is the whole queue. */
export interface Peek {
  readonly messages: PeekedMessage[];
  readonly complete: boolean;
}

/** Receives up to `max` distinct messages, each hidden for `holdSeconds`; the caller hands them back. */
export async function peekQueue(
  sqs: SQSClient,
  queueUrl: string,
  options: { max: number; holdSeconds: number; waitSeconds: number; budgetMs?: number },
): Promise<Peek> {
  const seen = new Map<string, PeekedMessage>();
  const deadline = Date.now() + (options.budgetMs ?? PEEK_BUDGET_MS);
  let idleRounds = 0;
  let complete = false;
  while (seen.size < options.max && Date.now() < deadline) {
    const received = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(10, options.max - seen.size),
        VisibilityTimeout: options.holdSeconds,
        WaitTimeSeconds: options.waitSeconds,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp'],
      }),
    );
    const messages = received.Messages ?? [];
    if (messages.length === 0) {
      complete = true;
      break;
    }
    let fresh = 0;
    for (const message of messages) {
      const messageId = message.MessageId ?? '';
      const receiptHandle = message.ReceiptHandle ?? '';
      const known = seen.get(messageId);
      if (known !== undefined) {
        // The same message again (SQS may return one twice): only the latest receipt handle is valid.
        known.receiptHandle = receiptHandle;
        continue;
      }
      fresh += 1;
      seen.set(messageId, describeMessage(messageId, receiptHandle, message));
    }
    idleRounds = fresh === 0 ? idleRounds + 1 : 0;
    if (idleRounds >= 3) break;
  }
  return { messages: [...seen.values()], complete };
}

function describeMessage(
  messageId: string,
  receiptHandle: string,
  message: {
    Body?: string;
    MessageAttributes?: Record<string, { StringValue?: string }>;
    Attributes?: Partial<Record<string, string>>;
  },
): PeekedMessage {
  const body = message.Body ?? '';
  const reason = message.MessageAttributes?.reason?.StringValue;
  const receiveCount = Number(message.Attributes?.ApproximateReceiveCount);
  const sent = Number(message.Attributes?.SentTimestamp);
  let jobId: string | undefined;
  let invalid: string | undefined;
  try {
    jobId = decodeJobMessage(body);
  } catch (error) {
    invalid = firstLine(error);
  }
  return {
    messageId,
    receiptHandle,
    body,
    ...(reason === undefined ? {} : { reason }),
    ...(jobId === undefined ? {} : { jobId }),
    ...(invalid === undefined ? {} : { invalid }),
    ...(Number.isFinite(receiveCount) && receiveCount > 0 ? { receiveCount } : {}),
    ...(Number.isFinite(sent) && sent > 0 ? { sentAt: new Date(sent).toISOString() } : {}),
  };
}

/** Makes the messages visible again at once (best effort: they reappear after their hold anyway). */
async function handBack(sqs: SQSClient, queueUrl: string, messages: readonly PeekedMessage[]): Promise<void> {
  for (let start = 0; start < messages.length; start += 10) {
    const batch = messages.slice(start, start + 10);
    await sqs
      .send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((message, i) => ({
            Id: String(i),
            ReceiptHandle: message.receiptHandle,
            VisibilityTimeout: 0,
          })),
        }),
      )
      .catch(() => undefined);
  }
}

/** Messages looked at when taking one job's messages out of the queue. */
const REMOVE_PEEK_MAX = 200;

/** What `removeJobDeadLetters` did: the job's messages deleted, and whether the peek saw the whole queue. */
export interface DeadLettersRemoved {
  readonly removed: number;
  readonly complete: boolean;
}

/**
 * Takes one job's messages out of the dead-letter queue (a replayed or redriven job no longer needs a person):
 * a peek as `dlq list` makes, deleting the job's messages and handing every other back at once.
 */
export async function removeJobDeadLetters(
  sqs: SQSClient,
  dlqUrl: string,
  jobId: string,
): Promise<DeadLettersRemoved> {
  const peek = await peekQueue(sqs, dlqUrl, {
    max: REMOVE_PEEK_MAX,
    holdSeconds: LIST_HOLD_SECONDS,
    waitSeconds: 0,
    budgetMs: 10_000,
  });
  const mine = peek.messages.filter((message) => message.jobId === jobId);
  try {
    for (const message of mine) await deleteMessage(sqs, dlqUrl, message);
  } finally {
    await handBack(
      sqs,
      dlqUrl,
      peek.messages.filter((message) => message.jobId !== jobId),
    );
  }
  return { removed: mine.length, complete: peek.complete };
}

/** One dead-letter message as `dlq list` shows it. */
export interface DlqEntry {
  messageId: string;
  /** The job id, or undefined for a message that is not a job message. */
  jobId?: string;
  reason?: string;
  /** Why the message is not a job message. */
  invalid?: string;
  receiveCount?: number;
  sentAt?: string;
  /** The job's state in the table (absent: no such job). */
  job?: Pick<JobRecord, 'status' | 'attempts' | 'error' | 'lastError' | 'updatedAt'>;
}

/** `dlq list`: the messages with their jobs' state; resolves to the exit code. */
export async function listDlq(
  ctx: CommandContext,
  options: { json?: boolean; max: number },
): Promise<number> {
  const target = await resolveStackTarget(ctx);
  try {
    return await list(ctx, target, options.max, options.json === true);
  } finally {
    target.close();
  }
}

/** `dlq redrive`: sends the messages back to the worker; resolves to the exit code. */
export async function redriveDlq(ctx: CommandContext, options: { max: number }): Promise<number> {
  const target = await resolveStackTarget(ctx);
  try {
    return await redrive(ctx, target, options.max);
  } finally {
    target.close();
  }
}

async function list(ctx: CommandContext, target: StackTarget, max: number, json: boolean): Promise<number> {
  const { sqs } = target.clients;
  const peek = await peekQueue(sqs, target.dlqUrl, {
    max,
    holdSeconds: LIST_HOLD_SECONDS,
    waitSeconds: target.kind === 'aws' ? 1 : 0,
  });
  let entries: DlqEntry[];
  try {
    const store = new DynamoJobRepository(target.clients.dynamodb, target.tableName);
    entries = await Promise.all(peek.messages.map((message) => toEntry(store, message)));
  } finally {
    await handBack(sqs, target.dlqUrl, peek.messages);
  }
  const more = peek.complete ? '' : ` (the first ${entries.length}: there may be more, see --max)`;
  if (json) {
    ctx.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
    if (!peek.complete) ctx.stderr.write(`docrelay dlq list: showing${more}\n`);
    return 0;
  }
  if (entries.length === 0) {
    ctx.stdout.write('the dead-letter queue is empty\n');
    return 0;
  }
  for (const entry of entries) ctx.stdout.write(`${formatEntry(entry)}\n`);
  ctx.stdout.write(`${entries.length} message(s) in the dead-letter queue${more}\n`);
  return 0;
}

async function toEntry(store: DynamoJobRepository, message: PeekedMessage): Promise<DlqEntry> {
  const job = message.jobId === undefined ? undefined : await store.getJob(message.jobId);
  return {
    messageId: message.messageId,
    ...(message.jobId === undefined ? {} : { jobId: message.jobId }),
    ...(message.reason === undefined ? {} : { reason: message.reason }),
    ...(message.invalid === undefined ? {} : { invalid: message.invalid }),
    ...(message.receiveCount === undefined ? {} : { receiveCount: message.receiveCount }),
    ...(message.sentAt === undefined ? {} : { sentAt: message.sentAt }),
    ...(job === undefined
      ? {}
      : {
          job: {
            status: job.status,
            attempts: job.attempts,
            updatedAt: job.updatedAt,
            ...(job.error === undefined ? {} : { error: job.error }),
            ...(job.lastError === undefined ? {} : { lastError: job.lastError }),
          },
        }),
  };
}

/** One line per message: job, status, attempts, reason, error. */
export function formatEntry(entry: DlqEntry): string {
  if (entry.jobId === undefined) {
    return `(invalid message)  message ${entry.messageId}  reason ${entry.reason ?? '-'}  ${entry.invalid ?? ''}`.trim();
  }
  const job = entry.job;
  const status = job === undefined ? 'no such job' : job.status;
  const error = job?.error ?? job?.lastError;
  const parts = [
    entry.jobId,
    status,
    `attempts ${job?.attempts ?? '-'}`,
    `reason ${entry.reason ?? '(receive limit)'}`,
    ...(error === undefined ? [] : [`error ${error.code}: ${error.message.replace(/\s+/g, ' ')}`]),
  ];
  return parts.join('  ');
}

/** What redrive decided for one message. */
type Decision =
  | { kind: 'redrive'; message: PeekedMessage; jobId: string; reset: boolean }
  | { kind: 'skip'; message: PeekedMessage; why: string }
  | { kind: 'leave'; message: PeekedMessage; why: string };

async function redrive(ctx: CommandContext, target: StackTarget, max: number): Promise<number> {
  const { sqs } = target.clients;
  const store = new DynamoJobRepository(target.clients.dynamodb, target.tableName);
  const peek = await peekQueue(sqs, target.dlqUrl, {
    max,
    holdSeconds: REDRIVE_HOLD_SECONDS,
    waitSeconds: target.kind === 'aws' ? 1 : 0,
  });
  const decisions: Decision[] = [];
  try {
    for (const message of peek.messages) decisions.push(await decide(store, message));
  } catch (error) {
    await handBack(sqs, target.dlqUrl, peek.messages);
    throw error;
  }
  const redriven = decisions.filter((d) => d.kind === 'redrive');
  const skipped = decisions.filter((d) => d.kind === 'skip');
  const left = decisions.filter((d) => d.kind === 'leave');

  let how: string;
  if (target.kind === 'aws' && peek.complete && left.length === 0 && decisions.length > 0) {
    // The whole queue goes back: SQS's own redrive moves it to the jobs queue (the worker ignores stored jobs).
    await handBack(sqs, target.dlqUrl, peek.messages);
    let task: { TaskHandle?: string };
    try {
      task = await startMoveTask(sqs, target.dlqUrl, target.queueUrl);
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw new CliError(
        `SQS did not start the move task (${firstLine(error)}); ${redriven.filter((d) => d.kind === 'redrive' && d.reset).length} failed job(s) were reset and their messages are still in the dead-letter queue: run dlq redrive again`,
      );
    }
    how = `; SQS move task started (${task.TaskHandle ?? 'no handle'}), messages go back to the jobs queue`;
  } else {
    const queue = new SqsJobQueue(sqs, target.queueUrl);
    for (const decision of redriven) {
      await queue.send([decision.jobId]);
      await deleteMessage(sqs, target.dlqUrl, decision.message);
    }
    for (const decision of skipped) await deleteMessage(sqs, target.dlqUrl, decision.message);
    await handBack(
      sqs,
      target.dlqUrl,
      left.map((decision) => decision.message),
    );
    how = '';
  }
  for (const decision of left) {
    ctx.stdout.write(
      `left ${decision.message.jobId ?? '(invalid message)'} (message ${decision.message.messageId}): ${decision.why}\n`,
    );
  }
  const more = peek.complete ? '' : ' (--max reached: there may be more)';
  ctx.stdout.write(
    `redriven ${redriven.length}, skipped ${skipped.length} (job already stored), left ${left.length}${how}${more}\n`,
  );
  return 0;
}

/**
 * Starts SQS's move task from the dead-letter queue to the jobs queue, named as its destination: messages the
 * worker parked itself (SendMessage to the DLQ) have no source queue SQS could return them to by default.
 */
export async function startMoveTask(
  sqs: Pick<SQSClient, 'send'>,
  dlqUrl: string,
  queueUrl: string,
): Promise<{ TaskHandle?: string }> {
  const [sourceArn, destinationArn] = await Promise.all([queueArn(sqs, dlqUrl), queueArn(sqs, queueUrl)]);
  return await sqs.send(
    new StartMessageMoveTaskCommand({ SourceArn: sourceArn, DestinationArn: destinationArn }),
  );
}

async function queueArn(sqs: Pick<SQSClient, 'send'>, queueUrl: string): Promise<string> {
  const answer = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
  );
  const arn = answer.Attributes?.QueueArn;
  if (arn === undefined) throw new CliError(`cannot read the ARN of queue ${queueUrl}`);
  return arn;
}

async function deleteMessage(sqs: SQSClient, queueUrl: string, message: PeekedMessage): Promise<void> {
  await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.receiptHandle }));
}

/** Resets a failed job (as replay does); an open one only needs its message back; a stored one nothing. */
async function decide(store: DynamoJobRepository, message: PeekedMessage): Promise<Decision> {
  if (message.jobId === undefined) {
    return { kind: 'leave', message, why: message.invalid ?? 'not a job message' };
  }
  const job = await store.getJob(message.jobId);
  if (job === undefined) return { kind: 'leave', message, why: 'no such job in the table' };
  switch (job.status) {
    case 'stored':
      return { kind: 'skip', message, why: 'stored' };
    case 'failed':
      try {
        await resetJobForReplay(store, job);
      } catch (error) {
        if (error instanceof JobConflictError) {
          return {
            kind: 'leave',
            message,
            why: 'the job changed while it was being reset; run redrive again',
          };
        }
        throw error;
      }
      return { kind: 'redrive', message, jobId: job.jobId, reset: true };
    default:
      // Still open (SQS moved it after too many receives): sending it again resumes it.
      return { kind: 'redrive', message, jobId: job.jobId, reset: false };
  }
}
