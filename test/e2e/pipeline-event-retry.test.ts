/**
 * A job's event is published at least once: when it cannot be (here the local stack's events file cannot be
 * written), the stored job keeps its message, which comes back and publishes it. The same handler code as the
 * Lambda's, over the local queue's real visibility changes.
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { waitForQueueDrained } from './helpers/settle';
import { startTestStack, type TestStack } from './helpers/stack';
import { waitUntil } from './helpers/wait';
import { signStandardWebhooks } from './helpers/webhooks';

jest.setTimeout(60_000);

let t: TestStack;

beforeAll(async () => {
  // Receives enough that the retries (1, 2, 4, 8 s …) outlast the test's own steps on a loaded machine.
  t = await startTestStack({ maxReceiveCount: 8 });
});

afterAll(async () => {
  await t?.dispose();
});

/** The events published for a job (the local stack appends them to events.jsonl). */
async function eventsOf(jobId: string): Promise<Array<{ 'detail-type': string }>> {
  const text = await readFile(join(t.dataDir, 'events.jsonl'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line))
    .filter((event) => event.detail.jobId === jobId);
}

it('keeps the message of a stored job whose event failed, and publishes the event once it can', async () => {
  const eventsFile = join(t.dataDir, 'events.jsonl');
  // A directory where the events file should be: every publish fails (EISDIR) until it goes.
  await mkdir(eventsFile, { recursive: true });
  try {
    const body = Buffer.from(JSON.stringify({ type: 'note.created', data: { title: 'T', body: 'event' } }));
    const answer = await t.post(
      'internal-notes',
      body,
      signStandardWebhooks(body, await t.secret('docrelay/internal-notes-webhook')),
    );
    expect(answer.status).toBe(202);
    const jobId = answer.body.jobs[0]?.jobId as string;

    const [view] = await t.waitForJobs([jobId]);
    expect(view?.status).toBe('stored');
    // Stored, and its message still held (deferred for the event's retry), not deleted.
    await waitUntil('the job’s message to be held for the event', async () => {
      const counts = await t.queueCounts();
      return counts.inFlight + counts.visible === 1 ? true : undefined;
    });
    expect(await eventsOf(jobId)).toEqual([]);

    await rm(eventsFile, { recursive: true });
    const events = await waitUntil('the job’s event', async () => {
      const published = await eventsOf(jobId);
      return published.length > 0 ? published : undefined;
    });
    expect(events.map((event) => event['detail-type'])).toEqual(['Document Stored']);
    // The message went with it: nothing left to publish again.
    await waitForQueueDrained(t);
    expect(await eventsOf(jobId)).toHaveLength(1);
    expect(t.lines.some((line) => line.includes(jobId) && line.includes('failed'))).toBe(false);
  } finally {
    await rm(eventsFile, { recursive: true, force: true }).catch(() => undefined);
  }
});
