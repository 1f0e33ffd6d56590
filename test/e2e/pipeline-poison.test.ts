/**
 * Poison ends in the dead-letter queue, with the job marked failed and a `Document Failed` event: a payload
 * that cannot be mapped, a request the service refuses (4xx), retries exhausted, and queue messages that are
 * not job messages at all. None of them is retried forever or lost silently.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { FaultSettings } from '../../local/emulator/faults';
import { startTestStack, type TestStack } from './helpers/stack';
import { waitUntil } from './helpers/wait';
import { signStandardWebhooks } from './helpers/webhooks';

jest.setTimeout(60_000);

let t: TestStack;

beforeAll(async () => {
  // Two receives at most, so exhausting the retries is quick; and no time allowed to wait out an outage, so
  // a service that answers 503 for good fails the job at the last receive (reliability-backpressure waits).
  t = await startTestStack({ emulator: { seed: 4 }, maxReceiveCount: 2, outageBudgetMs: 0 });
});

afterAll(async () => {
  await t?.dispose();
});

beforeEach(async () => {
  t.emulator.setFaults({ failNext: { count: 0, status: 500 } } satisfies Partial<FaultSettings>);
  t.emulator.resetStats();
  await t.drainDeadLetters();
});

async function postNote(data: Record<string, unknown>): Promise<string> {
  const body = Buffer.from(JSON.stringify({ type: 'note.created', data }));
  const answer = await t.post(
    'internal-notes',
    body,
    signStandardWebhooks(body, await t.secret('docrelay/internal-notes-webhook')),
  );
  expect(answer.status).toBe(202);
  return answer.body.jobs[0]?.jobId as string;
}

/** Waits for the dead-letter queue to hold `count` messages, and returns them. */
async function deadLetters(count: number) {
  const seen: Awaited<ReturnType<TestStack['drainDeadLetters']>> = [];
  return waitUntil(
    `${count} dead-lettered message(s)`,
    async () => {
      seen.push(...(await t.drainDeadLetters()));
      return seen.length >= count ? seen : undefined;
    },
    { describe: () => JSON.stringify(seen.map((m) => m.Body)) },
  );
}

/** The `Document Failed` events published for a job (the local stack appends them to events.jsonl). */
async function failedEvents(jobId: string): Promise<Array<{ detail: { error?: { code: string } } }>> {
  const text = await readFile(join(t.dataDir, 'events.jsonl'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line))
    .filter((event) => event['detail-type'] === 'Document Failed' && event.detail.jobId === jobId);
}

describe('jobs that can never succeed', () => {
  it('fails a job whose payload lacks a required value with a MAPPING_ code, once, and dead-letters it', async () => {
    const jobId = await postNote({ body: 'a note without a title' });

    const [view] = await t.waitForJobs([jobId]);
    const [letter] = await deadLetters(1);

    expect(view?.status).toBe('failed');
    expect(view?.error?.code).toMatch(/^MAPPING_/);
    expect(view?.error?.message).toContain('Title');
    expect(view?.attempts).toBe(1);
    expect(view?.files).toEqual([]);
    expect(JSON.parse(letter?.Body ?? '')).toEqual({ v: 1, jobId });
    expect(letter?.MessageAttributes?.reason?.StringValue).toBe(view?.error?.code);
    expect(t.emulator.stats().documentsCreated).toBe(0);
    expect((await failedEvents(jobId)).map((event) => event.detail.error?.code)).toEqual([view?.error?.code]);
  });

  it('fails a job the service refuses with a 4xx, without retrying, and dead-letters it', async () => {
    t.emulator.setFaults({ failNext: { count: 1, status: 400 } });

    const jobId = await postNote({ title: 'Refused by the service' });

    const [view] = await t.waitForJobs([jobId]);
    const [letter] = await deadLetters(1);
    expect(view?.status).toBe('failed');
    expect(view?.error?.code).toMatch(/^DOCGEN_/);
    expect(view?.attempts).toBe(1);
    expect(JSON.parse(letter?.Body ?? '')).toEqual({ v: 1, jobId });
    expect(t.emulator.stats().documentsCreated).toBe(0);
  });

  it('fails a job with RETRIES_EXHAUSTED after the last receive the queue allows, and dead-letters it', async () => {
    t.emulator.setFaults({ failNext: { count: 1000, status: 503 } });

    const jobId = await postNote({ title: 'Service down for good' });

    const [view] = await t.waitForJobs([jobId]);
    const letters = await deadLetters(1);
    expect(view?.status).toBe('failed');
    expect(view?.error?.code).toBe('RETRIES_EXHAUSTED');
    expect(view?.error?.message).toContain('HTTP 503');
    expect(view?.attempts).toBe(2);
    expect(letters.map((letter) => JSON.parse(letter.Body ?? ''))).toEqual([{ v: 1, jobId }]);
    expect((await failedEvents(jobId)).length).toBe(1);
  });

  it.each([
    ['not JSON', 'this is not json'],
    ['JSON of another shape', JSON.stringify({ v: 2, job: 'x' })],
  ])('dead-letters a queue message that is %s, as it was, with its reason', async (_name, body) => {
    await t.sqs.send(new SendMessageCommand({ QueueUrl: t.stack.aws.queueUrl, MessageBody: body }));

    const [letter] = await deadLetters(1);

    expect(letter?.Body).toBe(body);
    expect(letter?.MessageAttributes?.reason?.StringValue).toBe('INVALID_JOB_MESSAGE');
    await waitUntil('the poison message to leave the jobs queue', async () => {
      const counts = await t.queueCounts();
      return counts.visible + counts.inFlight + counts.delayed === 0 ? true : undefined;
    });
  });
});
