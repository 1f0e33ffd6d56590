/**
 * The acknowledgement's cost in AWS calls, on the local stack's real SDK clients: a new delivery is
 * conditional PutItems (its content key, the delivery, its jobs; no transaction) and one SendMessageBatch before
 * the 202; its duplicate, by id or by content, sends nothing. The workers are off, so every call seen is the ingest's.
 */

import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { readSample, startTestStack, type TestStack } from './helpers/stack';
import { signGithub } from './helpers/webhooks';

jest.setTimeout(60_000);

let t: TestStack;
let release: Buffer;
const calls: string[] = [];

/** Records the name of every command the client sends (its stack is the one the handlers use). */
function recordCalls(client: DynamoDBDocumentClient | SQSClient): void {
  (client as SQSClient).middlewareStack.add(
    (next, context) => async (args) => {
      calls.push(String(context.commandName).replace(/Command$/, ''));
      return next(args);
    },
    { step: 'initialize', name: 'recordIngestCalls' },
  );
}

beforeAll(async () => {
  t = await startTestStack({ emulator: { seed: 17 }, startWorkers: false, reconcileIntervalMs: 600_000 });
  release = await readSample('github-release-published.json');
  recordCalls(t.stack.clients.dynamodb);
  recordCalls(t.stack.clients.sqs);
});

afterAll(async () => {
  await t?.dispose();
});

beforeEach(() => {
  calls.length = 0;
});

const body = (label: string): Buffer =>
  Buffer.from(JSON.stringify({ ...(JSON.parse(release.toString('utf8')) as object), test: label }));

describe('the ingest’s AWS calls', () => {
  it('acknowledges a new delivery with plain puts and one message batch, then nothing', async () => {
    const secret = await t.secret('docrelay/github-webhook');
    const answer = await t.post('github-releases', body('new'), signGithub(body('new'), secret, 'calls-1'));
    expect(answer.status).toBe(202);
    expect(answer.body.jobs.length).toBeGreaterThan(0);
    // Content key, delivery, one put per job: no transaction (it bills every item twice).
    expect(calls).toEqual([...Array(2 + answer.body.jobs.length).fill('PutItem'), 'SendMessageBatch']);
    // Its jobs exist with the answer: the API finds them at once.
    for (const { jobId } of answer.body.jobs) expect((await t.getJob(jobId)).status).toBe(200);
  });

  it('answers its duplicates, by id and by content, without sending anything', async () => {
    const secret = await t.secret('docrelay/github-webhook');
    const first = await t.post('github-releases', body('dup'), signGithub(body('dup'), secret, 'calls-2'));
    calls.length = 0;
    const byId = await t.post('github-releases', body('dup'), signGithub(body('dup'), secret, 'calls-2'));
    const byContent = await t.post(
      'github-releases',
      body('dup'),
      signGithub(body('dup'), secret, 'calls-3'),
    );
    for (const answer of [byId, byContent]) {
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ deliveryId: 'calls-2', jobs: first.body.jobs, duplicate: true });
    }
    expect(calls).not.toContain('SendMessageBatch');
    expect(calls).not.toContain('TransactWriteItems');
  });
});
