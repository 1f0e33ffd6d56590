/** The jobs queue and dead-letter queue on SQS, against an SQS client answered in process. */
import {
  type ChangeMessageVisibilityCommandInput,
  type SendMessageBatchCommandInput,
  type SendMessageCommandInput,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { decodeJobMessage } from '../../../../functions/adapters/sqs/job-message';
import { SqsJobQueue } from '../../../../functions/adapters/sqs/job-queue';
import { DocrelayError } from '../../../../functions/commons/errors';
import { answerCommands, inputOf, OFFLINE } from '../sdk-answers';

const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/docrelay-jobs';

type Answer = (name: string, input: object) => object | Promise<object>;

function setup(answer: Answer = (name) => (name === 'SendMessage' ? { MessageId: 'm-1' } : {})) {
  const client = new SQSClient(OFFLINE);
  const sent = answerCommands(client, answer);
  return { queue: new SqsJobQueue(client, QUEUE_URL), sent };
}

const ids = (count: number): string[] => Array.from({ length: count }, (_, i) => `job-${i}`);

const unavailable = (message: string | RegExp) =>
  expect.objectContaining({
    code: 'QUEUE_UNAVAILABLE',
    retryable: true,
    message: expect.stringMatching(message),
  });

describe('SqsJobQueue.send and park', () => {
  it('sends one job message per job, in batches of ten, with the job id as an attribute', async () => {
    const { queue, sent } = setup();
    await queue.send(ids(23));
    expect(sent.map((s) => s.name)).toEqual(['SendMessageBatch', 'SendMessageBatch', 'SendMessageBatch']);
    const batches = sent.map((s) => s.input as SendMessageBatchCommandInput);
    expect(batches.map((b) => b.Entries?.length)).toEqual([10, 10, 3]);
    expect(batches.every((b) => b.QueueUrl === QUEUE_URL)).toBe(true);
    const entries = batches.flatMap((b) => b.Entries ?? []);
    expect(entries.map((e) => decodeJobMessage(String(e.MessageBody)))).toEqual(ids(23));
    expect(entries[12]?.MessageAttributes).toEqual({ jobId: { DataType: 'String', StringValue: 'job-12' } });
    expect(new Set(batches[0]?.Entries?.map((e) => e.Id)).size).toBe(10);
  });

  it('sends nothing for no jobs', async () => {
    const { queue, sent } = setup();
    await queue.send([]);
    expect(sent).toEqual([]);
  });

  it('parks jobs with the reason as an attribute', async () => {
    const { queue, sent } = setup();
    await queue.park(['job-1'], 'DOCGEN_BAD_REQUEST');
    const entry = inputOf<SendMessageBatchCommandInput>(sent, 0).Entries?.[0];
    expect(entry?.MessageAttributes).toEqual({
      jobId: { DataType: 'String', StringValue: 'job-1' },
      reason: { DataType: 'String', StringValue: 'DOCGEN_BAD_REQUEST' },
    });
  });

  it('fails retryably, naming how many, when SQS refuses part of a batch', async () => {
    const { queue } = setup((name, input) => {
      const entries = (input as SendMessageBatchCommandInput).Entries ?? [];
      return name === 'SendMessageBatch'
        ? {
            Successful: [],
            Failed: entries.slice(0, 2).map((e) => ({ Id: e.Id, SenderFault: false, Code: 'InternalError' })),
          }
        : {};
    });
    const error = await queue.send(ids(3)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DocrelayError);
    expect(error).toEqual(unavailable('the jobs queue refused 2 of 3 jobs'));
  });

  it('stops at the first batch that fails, keeping the cause', async () => {
    const cause = new Error('socket hang up');
    let calls = 0;
    const { queue, sent } = setup(() => {
      calls += 1;
      if (calls === 2) throw cause;
      return {};
    });
    const error = await queue.send(ids(30)).catch((e: unknown) => e);
    expect(error).toEqual(unavailable('the jobs queue did not accept the jobs'));
    expect((error as Error).cause).toBe(cause);
    expect(sent).toHaveLength(2);
  });
});

describe('SqsJobQueue.send: sends made together share a batch', () => {
  const bodies = (input: object): string[] =>
    ((input as SendMessageBatchCommandInput).Entries ?? []).map((e) =>
      decodeJobMessage(String(e.MessageBody)),
    );

  it('sends made in one turn of the event loop go in one SendMessageBatch, each in order, and each resolves', async () => {
    const { queue, sent } = setup();
    await Promise.all([queue.send(['a-1', 'a-2']), queue.send(['b-1']), queue.send(['c-1', 'c-2', 'c-3'])]);
    expect(sent.map((s) => s.name)).toEqual(['SendMessageBatch']);
    expect(bodies(inputOf(sent))).toEqual(['a-1', 'a-2', 'b-1', 'c-1', 'c-2', 'c-3']);
    const idsSent = (inputOf<SendMessageBatchCommandInput>(sent).Entries ?? []).map((e) => e.Id);
    expect(new Set(idsSent).size).toBe(6);
  });

  it('sends made in different turns go separately', async () => {
    const { queue, sent } = setup();
    await queue.send(['a-1']);
    await queue.send(['b-1']);
    expect(sent.map((s) => bodies(s.input))).toEqual([['a-1'], ['b-1']]);
  });

  it('a batch never holds more than ten messages, nor splits one send', async () => {
    const { queue, sent } = setup();
    await Promise.all([
      queue.send(ids(6)),
      queue.send(['x-1', 'x-2', 'x-3', 'x-4', 'x-5', 'x-6']),
      queue.send(['y']),
    ]);
    expect(sent.map((s) => bodies(s.input))).toEqual([
      ids(6),
      ['x-1', 'x-2', 'x-3', 'x-4', 'x-5', 'x-6', 'y'],
    ]);
  });

  it('a send of more than ten jobs goes alone, in batches of ten, in order', async () => {
    const { queue, sent } = setup();
    await Promise.all([queue.send(['a-1']), queue.send(ids(12))]);
    expect(sent.map((s) => bodies(s.input))).toEqual([ids(12).slice(0, 10), ids(12).slice(10), ['a-1']]);
  });

  it('only the send whose message SQS refused fails; the others of its batch resolve', async () => {
    const { queue } = setup((name, input) => {
      const entries = (input as SendMessageBatchCommandInput).Entries ?? [];
      const refused = entries.filter((e) => decodeJobMessage(String(e.MessageBody)) === 'b-2');
      return name === 'SendMessageBatch'
        ? {
            Successful: entries.filter((e) => !refused.includes(e)).map((e) => ({ Id: e.Id })),
            Failed: refused.map((e) => ({ Id: e.Id, SenderFault: false, Code: 'InternalError' })),
          }
        : {};
    });
    const [a, b, c] = await Promise.allSettled([
      queue.send(['a-1']),
      queue.send(['b-1', 'b-2']),
      queue.send(['c-1']),
    ]);
    expect(a.status).toBe('fulfilled');
    expect(c.status).toBe('fulfilled');
    expect(b).toEqual({ status: 'rejected', reason: unavailable('the jobs queue refused 1 of 2 jobs') });
  });

  it('a refusal naming an id that is not in the batch fails every send of it', async () => {
    const { queue } = setup((name) =>
      name === 'SendMessageBatch'
        ? { Successful: [], Failed: [{ Id: 'not-ours', SenderFault: false, Code: 'InternalError' }] }
        : {},
    );
    const outcomes = await Promise.allSettled([queue.send(['a-1']), queue.send(['b-1', 'b-2'])]);
    expect(outcomes).toEqual([
      { status: 'rejected', reason: unavailable('the jobs queue refused 1 of 1 jobs') },
      { status: 'rejected', reason: unavailable('the jobs queue refused 2 of 2 jobs') },
    ]);
  });

  it('when the batch fails, every send of it fails retryably with the cause', async () => {
    const cause = new Error('socket hang up');
    const { queue } = setup(() => {
      throw cause;
    });
    const outcomes = await Promise.allSettled([queue.send(['a-1']), queue.send(['b-1'])]);
    for (const outcome of outcomes) {
      expect(outcome).toEqual({
        status: 'rejected',
        reason: unavailable('the jobs queue did not accept the jobs'),
      });
      expect((outcome as PromiseRejectedResult).reason.cause).toBe(cause);
    }
  });
});

describe('SqsJobQueue.send: a client that throws at once', () => {
  it('fails every send of the batch instead of throwing out of the event loop', async () => {
    const cause = new Error('no middleware stack');
    const client = {
      send: () => {
        throw cause;
      },
    } as unknown as SQSClient;
    const queue = new SqsJobQueue(client, QUEUE_URL);
    const outcomes = await Promise.allSettled([queue.send(['a-1']), queue.send(['b-1'])]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect((outcomes[0] as PromiseRejectedResult).reason).toEqual(
      unavailable('the jobs queue did not accept the jobs'),
    );
    expect((outcomes[1] as PromiseRejectedResult).reason.cause).toBe(cause);
  });
});

describe('SqsJobQueue.sendDelayed', () => {
  it('sends one delayed job message and resolves to its id', async () => {
    const { queue, sent } = setup();
    await expect(queue.sendDelayed('job-1', 42.4)).resolves.toBe('m-1');
    const input = sent[0]?.input as SendMessageCommandInput;
    expect(decodeJobMessage(String(input.MessageBody))).toBe('job-1');
    expect(input.DelaySeconds).toBe(42);
  });

  it.each([
    [-5, 0],
    [901, 900],
    [10_000, 900],
  ])('clamps a delay of %p s to %p s (what SQS takes)', async (asked, sent) => {
    const setupResult = setup();
    await setupResult.queue.sendDelayed('job-1', asked);
    expect(inputOf<SendMessageCommandInput>(setupResult.sent, 0).DelaySeconds).toBe(sent);
  });

  it('fails retryably when SQS refuses the message or gives no id', async () => {
    const refusing = setup(() => {
      throw new Error('throttled');
    });
    await expect(refusing.queue.sendDelayed('job-1', 1)).rejects.toEqual(
      unavailable('the jobs queue did not accept the job'),
    );
    const silent = setup(() => ({}));
    await expect(silent.queue.sendDelayed('job-1', 1)).rejects.toEqual(
      unavailable('the jobs queue gave no message id'),
    );
  });
});

describe('SqsJobQueue.parkRaw and defer', () => {
  it('parks a poison body as it came, with the reason', async () => {
    const { queue, sent } = setup();
    await queue.parkRaw('{"v":2}', 'INVALID_JOB_MESSAGE');
    expect(sent[0]?.input).toEqual({
      QueueUrl: QUEUE_URL,
      MessageBody: '{"v":2}',
      MessageAttributes: { reason: { DataType: 'String', StringValue: 'INVALID_JOB_MESSAGE' } },
    });
  });

  it('parks an empty body as a placeholder (SQS refuses empty messages)', async () => {
    const { queue, sent } = setup();
    await queue.parkRaw('', 'INVALID_JOB_MESSAGE');
    expect(inputOf<SendMessageCommandInput>(sent, 0).MessageBody).toBe('(empty)');
  });

  it.each([
    [30.6, 31],
    [-1, 0],
    [50_000, 43_200],
  ])('defers a received message by %p s as a visibility of %p s', async (asked, visibility) => {
    const { queue, sent } = setup();
    await queue.defer('receipt-1', asked);
    expect(sent[0]?.name).toBe('ChangeMessageVisibility');
    expect(inputOf<ChangeMessageVisibilityCommandInput>(sent, 0)).toEqual({
      QueueUrl: QUEUE_URL,
      ReceiptHandle: 'receipt-1',
      VisibilityTimeout: visibility,
    });
  });
});
