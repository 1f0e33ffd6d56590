/**
 * Deduplication end to end: a delivery sent again (as senders do when an answer is lost), one after the other
 * or several at once, makes one set of jobs and exactly one document per job.
 */

import { waitForQueueDrained } from './helpers/settle';
import { readSample, startTestStack, type TestStack } from './helpers/stack';
import { signStandardWebhooks } from './helpers/webhooks';

jest.setTimeout(60_000);

let t: TestStack;
let release: Buffer;

beforeAll(async () => {
  t = await startTestStack({ emulator: { seed: 2 } });
  release = await readSample('github-release-published.json');
});

afterAll(async () => {
  await t?.dispose();
});

beforeEach(() => {
  t.emulator.resetStats();
});

/**
 * The sample release as a delivery of its own: GitHub does not sign its delivery id, so docrelay dedupes on
 * the signed body too, and each test's deliveries must differ in their bytes as distinct real events do.
 */
const distinct = (label: string): Buffer =>
  Buffer.from(JSON.stringify({ ...(JSON.parse(release.toString('utf8')) as object), test: label }));

/** Waits until no job message is left anywhere in the queue (so no late duplicate can still run). */
const queueDrained = () => waitForQueueDrained(t);

describe('a delivery received more than once', () => {
  it('answers a redelivery 200 duplicate with the same jobs, and generates one document per job', async () => {
    const sequential = distinct('sequential');
    const first = await t.postGithub(sequential, 'dedupe-sequential');
    await t.waitForJobs(first.body.jobs.map((job) => job.jobId));

    const again = await t.postGithub(sequential, 'dedupe-sequential');
    const thrice = await t.postGithub(sequential, 'dedupe-sequential');

    expect(first.status).toBe(202);
    expect(first.body.duplicate).toBeUndefined();
    for (const duplicate of [again, thrice]) {
      expect(duplicate.status).toBe(200);
      expect(duplicate.body).toEqual({ ...first.body, duplicate: true });
    }
    await queueDrained();
    expect(t.emulator.stats().documentsCreated).toBe(first.body.jobs.length);
  });

  it('answers a redelivery that arrives while the jobs are still running as a duplicate too', async () => {
    const inFlight = distinct('in-flight');
    t.emulator.setFaults({ generationLatencyMs: 300 });
    try {
      const first = await t.postGithub(inFlight, 'dedupe-in-flight');
      const again = await t.postGithub(inFlight, 'dedupe-in-flight');

      expect(again.status).toBe(200);
      expect(again.body.jobs).toEqual(first.body.jobs);
      const views = await t.waitForJobs(first.body.jobs.map((job) => job.jobId));
      expect(views.map((view) => view.status)).toEqual(['stored', 'stored']);
      await queueDrained();
      expect(t.emulator.stats().documentsCreated).toBe(2);
    } finally {
      t.emulator.setFaults({ generationLatencyMs: 0 });
    }
  });

  it('generates one document when the generation outlasts the visibility timeout (the attempt holds its job)', async () => {
    // Generation takes longer than the queue's visibility timeout (3 s): the message comes back to another
    // lane while the first attempt still runs, and must not make that lane generate the document again.
    t.emulator.setFaults({ generationLatencyMs: 4_000 });
    try {
      const body = Buffer.from(JSON.stringify({ type: 'note.created', data: { title: 'Slow generation' } }));
      const answer = await t.post(
        'internal-notes',
        body,
        signStandardWebhooks(body, await t.secret('docrelay/internal-notes-webhook')),
      );
      const [view] = await t.waitForJobs(answer.body.jobs.map((job) => job.jobId));

      expect(view?.status).toBe('stored');
      await queueDrained();
      expect(t.emulator.stats().documentsCreated).toBe(1);
      expect(view?.document?.id).toBe(t.emulator.stats().createdDocuments[0]?.documentId);
    } finally {
      t.emulator.setFaults({ generationLatencyMs: 0 });
    }
  });

  it('makes one set of jobs when five copies of a delivery arrive at once', async () => {
    const concurrent = distinct('concurrent');
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => t.postGithub(concurrent, 'dedupe-concurrent')),
    );

    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 202]);
    const accepted = answers.find((answer) => answer.status === 202);
    for (const answer of answers) {
      expect(answer.body.deliveryId).toBe('dedupe-concurrent');
      expect(answer.body.jobs).toEqual(accepted?.body.jobs);
      expect(answer.body.duplicate).toBe(answer.status === 200 ? true : undefined);
    }
    const jobIds = (accepted?.body.jobs ?? []).map((job) => job.jobId);
    expect(jobIds).toHaveLength(2);
    const views = await t.waitForJobs(jobIds);
    expect(views.map((view) => [view.status, view.attempts])).toEqual([
      ['stored', 1],
      ['stored', 1],
    ]);
    await queueDrained();
    const documents = t.emulator.stats().createdDocuments;
    expect(documents.map((doc) => doc.documentId).sort()).toEqual(
      views.map((view) => view.document?.id).sort(),
    );
  });
});
