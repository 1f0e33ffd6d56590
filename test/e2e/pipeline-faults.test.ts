/**
 * Faults injected in the service emulator end stored: never lost, never duplicated. Rate limits (429 with
 * Retry-After), server errors, failed and truncated downloads and an expired download link each make the job
 * retry, from its checkpoint where it has one; the only extra documents are the regenerations an expired link
 * forces. Every stored file is byte for byte the one the service generated.
 */
import { randomUUID } from 'node:crypto';
import type { JobView } from '../../functions/core/job-view';
import type { FaultSettings } from '../../local/emulator/faults';
import { sha256, startTestStack, type TestStack } from './helpers/stack';
import { waitUntil } from './helpers/wait';
import { signStandardWebhooks } from './helpers/webhooks';

jest.setTimeout(60_000);

const NO_FAULTS: Partial<FaultSettings> = {
  rate429: 0,
  rate5xx: 0,
  retryAfterSeconds: 0,
  downloadFailRate: 0,
  downloadTruncateRate: 0,
  linkTtlMs: 3_600_000,
  failNext: { count: 0, status: 500 },
};

let t: TestStack;

beforeAll(async () => {
  // A visibility timeout long enough for one attempt with the client's own retries, short enough for tests.
  t = await startTestStack({ emulator: { seed: 3 }, visibilityTimeoutSeconds: 5, maxReceiveCount: 8 });
});

afterAll(async () => {
  await t?.dispose();
});

beforeEach(() => {
  t.emulator.setFaults(NO_FAULTS);
  t.emulator.resetStats();
});

/** Posts an internal note (one rule, one single-file template): one job per delivery. */
async function postNote(title: string): Promise<string> {
  const body = Buffer.from(
    JSON.stringify({ type: 'note.created', data: { title, body: `Body of ${title}` } }),
  );
  const answer = await t.post(
    'internal-notes',
    body,
    signStandardWebhooks(body, await t.secret('docrelay/internal-notes-webhook')),
  );
  expect(answer.status).toBe(202);
  expect(answer.body.jobs).toHaveLength(1);
  return answer.body.jobs[0]?.jobId as string;
}

/** Requests the emulator answered with an injected fault of this kind. */
const faultCount = (fault: string): number =>
  t.emulator.stats().requests.filter((request) => request.fault === fault).length;

/** Downloads answered 404: links that had expired. Each forces one regeneration. */
const expiredDownloads = (): number =>
  t.emulator.stats().requests.filter((request) => request.path === '/download' && request.status === 404)
    .length;

/** Waits until the emulator has injected at least `count` faults of a kind. */
const faultsInjected = (fault: string, count: number) =>
  waitUntil(
    `${count} injected ${fault} faults`,
    async () => (faultCount(fault) >= count ? true : undefined),
    {
      describe: () => `${faultCount(fault)} so far`,
    },
  );

/** Every stored job's file is the one the service generated for its (last) document, byte for byte. */
async function expectStoredAsGenerated(views: readonly JobView[]): Promise<void> {
  const documents = new Map(t.emulator.stats().createdDocuments.map((doc) => [doc.documentId, doc]));
  for (const view of views) {
    expect({ jobId: view.jobId, status: view.status }).toEqual({ jobId: view.jobId, status: 'stored' });
    const served = documents.get(view.document?.id as string);
    expect(served).toBeDefined();
    const file = view.files[0] as JobView['files'][number];
    const object = await t.readObject(file.bucket, file.key);
    expect({ sha256: sha256(object.bytes), size: object.bytes.length }).toEqual({
      sha256: served?.files[0]?.sha256,
      size: served?.files[0]?.size,
    });
    expect(file.sha256).toBe(served?.files[0]?.sha256);
  }
}

describe('faults of the service', () => {
  it('retries through 429 answers with Retry-After until the document is stored, generating it once', async () => {
    // More 429s than the client's own attempts (4): the worker must defer the message and come back.
    t.emulator.setFaults({ failNext: { count: 5, status: 429 }, retryAfterSeconds: 1 });

    const jobId = await postNote('Rate limited');
    const [view] = await t.waitForJobs([jobId]);

    expect(faultCount('failNext')).toBe(5);
    expect(t.emulator.stats().requests.filter((r) => r.status === 429)).toHaveLength(5);
    expect(view?.attempts).toBeGreaterThanOrEqual(2);
    expect(t.emulator.stats().documentsCreated).toBe(1);
    await expectStoredAsGenerated([view as JobView]);
  });

  it.each([500, 503])('retries through server errors (%i) and stores the document once', async (status) => {
    t.emulator.setFaults({ failNext: { count: 5, status } });

    const jobId = await postNote(`Server error ${status}`);
    const [view] = await t.waitForJobs([jobId]);

    expect(faultCount('failNext')).toBe(5);
    expect(view?.attempts).toBeGreaterThanOrEqual(2);
    expect(t.emulator.stats().documentsCreated).toBe(1);
    await expectStoredAsGenerated([view as JobView]);
  });

  it('resumes from the created checkpoint when downloads fail, without generating again', async () => {
    t.emulator.setFaults({ downloadFailRate: 1 });

    const jobId = await postNote('Download fails');
    // The client's own download attempts (4) fail, so the attempt fails with the document created.
    await faultsInjected('downloadFail', 4);
    await waitUntil('the job to be deferred with its document checkpointed', async () => {
      const view = (await t.getJob(jobId)).body;
      return view.lastError !== undefined && view.document !== undefined ? view : undefined;
    });
    t.emulator.setFaults({ downloadFailRate: 0 });
    const [view] = await t.waitForJobs([jobId]);

    expect(view?.attempts).toBeGreaterThanOrEqual(2);
    expect(t.emulator.stats().documentsCreated).toBe(1);
    await expectStoredAsGenerated([view as JobView]);
  });

  it('never stores a truncated download: the copy is refused and retried from the checkpoint', async () => {
    t.emulator.setFaults({ downloadTruncateRate: 1 });

    const jobId = await postNote('Download truncated');
    await faultsInjected('downloadTruncate', 2);
    expect((await t.getJob(jobId)).body.status).not.toBe('stored');
    t.emulator.setFaults({ downloadTruncateRate: 0 });
    const [view] = await t.waitForJobs([jobId]);

    expect(t.emulator.stats().documentsCreated).toBe(1);
    await expectStoredAsGenerated([view as JobView]);
  });

  it('asks for a new document when the download link has expired, and stores the new one', async () => {
    // Links of new documents die at once; once one expired download was seen, links live again.
    t.emulator.setFaults({ linkTtlMs: 0 });

    const jobId = await postNote('Link expired');
    await waitUntil('an expired download link', async () => (expiredDownloads() >= 1 ? true : undefined));
    t.emulator.setFaults({ linkTtlMs: 3_600_000 });
    const [view] = await t.waitForJobs([jobId]);

    const regenerations = expiredDownloads();
    expect(regenerations).toBeGreaterThanOrEqual(1);
    expect(t.emulator.stats().documentsCreated).toBe(1 + regenerations);
    await expectStoredAsGenerated([view as JobView]);
  });

  it('stores every delivery of a seeded storm of mixed faults exactly once', async () => {
    t.emulator.setFaults({
      rate429: 0.2,
      rate5xx: 0.2,
      downloadFailRate: 0.3,
      downloadTruncateRate: 0.3,
    });

    const jobIds = await Promise.all(
      Array.from({ length: 6 }, (_, i) => postNote(`Storm ${i} ${randomUUID()}`)),
    );
    const views = await t.waitForJobs(jobIds, { timeoutMs: 45_000 });

    // The storm did happen...
    expect(faultCount('rate429') + faultCount('rate5xx')).toBeGreaterThan(0);
    expect(faultCount('downloadFail') + faultCount('downloadTruncate')).toBeGreaterThan(0);
    // ...and every job is stored, each from exactly one document.
    expect(views.map((view) => view.status)).toEqual(jobIds.map(() => 'stored'));
    expect(t.emulator.stats().documentsCreated).toBe(jobIds.length + expiredDownloads());
    expect(expiredDownloads()).toBe(0);
    expect(new Set(views.map((view) => view.document?.id)).size).toBe(jobIds.length);
    await expectStoredAsGenerated(views);
  });
});
