import { DocrelayError } from '../../../functions/commons/errors';
import { acceptWebhook } from '../../../functions/core/accept-delivery';
import { JobConflictError } from '../../../functions/core/errors';
import type { JobRecord } from '../../../functions/core/job';
import { processJob, type Receipt } from '../../../functions/core/process-job';
import { resetJobForReplay } from '../../../functions/core/replay';
import { MAX_COPY_RETRIES_PER_ATTEMPT } from '../../../functions/core/retry-policy';
import {
  DocgenBadRequestError,
  DocgenDownloadOriginRefusedError,
  DocgenRateLimitedError,
  DocgenUnavailableError,
} from '../../../functions/docgen/errors';
import { config, memoryBench, recordedInSteps, signedWebhook } from './support';

/** Copy failures that outlast the retries within one attempt. */
const COPY_FAILURES = MAX_COPY_RETRIES_PER_ATTEMPT + 1;

type Bench = ReturnType<typeof memoryBench>;

const receipt = (messageId = 'm-1', receiveCount = 1, extra: Partial<Receipt> = {}): Receipt => ({
  messageId,
  receiveCount,
  ...extra,
});

/** Accepts one `notes` webhook and returns its job id. */
async function oneJob(b: Bench, id = 'n-1'): Promise<string> {
  const answer = await acceptWebhook(b.ingest, signedWebhook('notes', { id, customer: 'Ada', number: '42' }));
  return answer.body.jobs[0]?.jobId as string;
}

const job = async (b: Bench, jobId: string): Promise<JobRecord> => (await b.jobs.getJob(jobId)) as JobRecord;

describe('processJob', () => {
  it('claims, maps, generates, copies each file and stores the job, then publishes Document Stored', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    const outcome = await processJob(b.worker, jobId, receipt());
    expect(outcome.kind).toBe('stored');
    const stored = await job(b, jobId);
    expect(stored).toMatchObject({ status: 'stored', attempts: 1, documentsRequested: 1 });
    expect(b.service.created).toEqual([
      expect.objectContaining({
        templateId: '9001',
        data: { 'Customer Name': 'Ada', 'Invoice Number': '42' },
      }),
    ]);
    const file = stored.files[0];
    expect(file?.key).toMatch(new RegExp(`^notes/2026/01/01/${jobId}/invoice\\.docx$`));
    const object = b.store.objects.get(file?.key as string);
    expect(object?.body.toString()).toContain('"Customer Name":"Ada"');
    expect(object?.metadata['docrelay-job']).toBe(jobId);
    expect(file?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.document?.sealedLinks).toBeUndefined();
    expect(b.events.events.map((e) => [e.type, e.detail.status])).toEqual([['Document Stored', 'stored']]);
  });

  it('closes a delivery recorded open on the first pickup only, and goes on when closing fails', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b, 'n-c');
    recordedInSteps(b.jobs, 'notes', 'n-c');
    expect((await b.jobs.getDelivery('notes', 'n-c'))?.enqueuedAt).toBeUndefined();
    b.service.failCreate(new DocgenUnavailableError('503'));
    expect((await processJob(b.worker, jobId, receipt())).kind).toBe('retry');
    expect((await b.jobs.getDelivery('notes', 'n-c'))?.enqueuedAt).toBeDefined();
    const closes = b.jobs.writes.filter((w) => w.operation === 'closeDelivery').length;
    expect(closes).toBe(1);
    expect((await processJob(b.worker, jobId, receipt('m-2', 2))).kind).toBe('stored');
    expect(b.jobs.writes.filter((w) => w.operation === 'closeDelivery')).toHaveLength(closes);

    const other = await oneJob(b, 'n-d');
    recordedInSteps(b.jobs, 'notes', 'n-d');
    b.jobs.failNext('closeDelivery', new Error('table down'));
    expect((await processJob(b.worker, other, receipt('m-3'))).kind).toBe('stored');
    expect((await b.jobs.getDelivery('notes', 'n-d'))?.enqueuedAt).toBeUndefined();
  });

  it('skips a message for a missing or final job', async () => {
    const b = memoryBench();
    expect((await processJob(b.worker, 'nope', receipt())).kind).toBe('skipped');
    const jobId = await oneJob(b);
    await processJob(b.worker, jobId, receipt());
    expect((await processJob(b.worker, jobId, receipt('m-2'))).kind).toBe('skipped');
    expect(b.service.created).toHaveLength(1);
  });

  it('drops a duplicate message while another live worker holds the job', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    const current = await job(b, jobId);
    await b.jobs.updateJob(current, { leaseOwner: 'm-other', leaseUntil: b.clock.ms + 10_000 });
    expect((await processJob(b.worker, jobId, receipt('m-dup'))).kind).toBe('skipped');
    expect(b.service.created).toHaveLength(0);
  });

  it('takes over a job whose holder let its lease expire', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    const current = await job(b, jobId);
    await b.jobs.updateJob(current, {
      status: 'processing',
      leaseOwner: 'm-dead',
      leaseUntil: b.clock.ms - 1,
    });
    expect((await processJob(b.worker, jobId, receipt('m-new'))).kind).toBe('stored');
  });

  it.each([
    ['recorded with its jobs (closed): reads its delivery once', false, 1],
    ['recorded open: reads its delivery in the write that closes it', true, 0],
  ])('claims a waiting job in one write; a delivery %s', async (_, open, deliveryReads) => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    if (open) recordedInSteps(b.jobs, 'notes', 'n-1');
    const reads = { getJob: 0, getDelivery: 0 };
    const { getJob, getDelivery } = b.jobs;
    b.jobs.getJob = (...args) => {
      reads.getJob += 1;
      return getJob.apply(b.jobs, args);
    };
    b.jobs.getDelivery = (...args) => {
      reads.getDelivery += 1;
      return getDelivery.apply(b.jobs, args);
    };
    expect((await processJob(b.worker, jobId, receipt())).kind).toBe('stored');
    expect(reads).toEqual({ getJob: 0, getDelivery: deliveryReads });
    // The claim, and one write that records the document, its file and `stored` (job-checkpoint.ts; the
    // default key pattern gives the job its own prefix, so no key is listed before the file lands).
    expect(b.jobs.writes.filter((w) => w.key === jobId).map((w) => w.operation)).toEqual([
      'claimJob',
      'updateJob',
    ]);
    expect(b.jobs.writes.filter((w) => w.operation === 'closeDelivery')).toHaveLength(open ? 1 : 0);
  });

  it('closes a delivery of several jobs on the first pickup of its last job only', async () => {
    const b = memoryBench();
    const answer = await acceptWebhook(
      b.ingest,
      signedWebhook('releases', { name: 'v1', repo: 'docrelay', draft: false }),
    );
    const { deliveryId } = answer.body;
    const [first, last] = answer.body.jobs.map((j) => j.jobId as string);
    // Recorded with its jobs in one write: nothing to close.
    expect((await job(b, last as string)).closesDelivery).toBeUndefined();
    recordedInSteps(b.jobs, 'releases', deliveryId);
    expect((await job(b, first as string)).closesDelivery).toBeUndefined();
    expect((await job(b, last as string)).closesDelivery).toBe(true);
    expect((await processJob(b.worker, first as string, receipt('m-1'))).kind).toBe('stored');
    expect((await b.jobs.getDelivery('releases', deliveryId))?.enqueuedAt).toBeUndefined();
    expect((await processJob(b.worker, last as string, receipt('m-2'))).kind).toBe('stored');
    expect((await b.jobs.getDelivery('releases', deliveryId))?.enqueuedAt).toBeDefined();
    expect(b.jobs.writes.filter((w) => w.operation === 'closeDelivery')).toHaveLength(1);
  });

  it('reads the job and decides when the one-write claim refuses it: out of attempts fails it', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    await b.jobs.updateJob(await job(b, jobId), { attempts: 4 });
    expect(await processJob(b.worker, jobId, receipt())).toMatchObject({
      kind: 'failed',
      job: { status: 'failed', attempts: 4, error: { code: 'ATTEMPTS_EXHAUSTED' } },
    });
    expect(b.service.created).toHaveLength(0);
  });

  it('does not count outage retries against the attempts: the read claims what the one write refused', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    await b.jobs.updateJob(await job(b, jobId), { attempts: 4, outageRetries: 2 });
    expect(await processJob(b.worker, jobId, receipt())).toMatchObject({
      kind: 'stored',
      job: { attempts: 5 },
    });
  });

  it('retries in a second when it loses the claim to another writer', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    // The one-write claim finds the job changed, and so does the claim from what was read after it.
    b.jobs.claimJob = async () => undefined;
    b.jobs.failNext('updateJob', new JobConflictError(jobId));
    expect(await processJob(b.worker, jobId, receipt())).toMatchObject({
      kind: 'retry',
      delaySeconds: 1,
      error: { code: 'JOB_CONFLICT' },
    });
  });

  it('resumes from the checkpoint: a created job copies without generating again', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.store.failNext(
      new DocrelayError('STORAGE_WRITE_FAILED', 'S3 down', { retryable: true }),
      COPY_FAILURES,
    );
    expect(await processJob(b.worker, jobId, receipt())).toMatchObject({ kind: 'retry' });
    expect(await job(b, jobId)).toMatchObject({
      status: 'created',
      lastError: { code: 'STORAGE_WRITE_FAILED' },
    });
    expect((await processJob(b.worker, jobId, receipt('m-1', 2))).kind).toBe('stored');
    expect(b.service.created).toHaveLength(1);
  });

  it('asks for a new document when the links expired before the copy', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.service.failDownload('expire');
    expect((await processJob(b.worker, jobId, receipt())).kind).toBe('stored');
    expect(b.service.created).toHaveLength(2);
    expect((await job(b, jobId)).documentsRequested).toBe(2);
  });

  it('copies from kept links past the planned lifetime while the service still serves them', async () => {
    const b = memoryBench();
    b.service.linksLive(60 * 60_000, b.clock.now);
    const jobId = await oneJob(b);
    b.store.failNext(new DocrelayError('STORAGE_WRITE_FAILED', 'down', { retryable: true }), COPY_FAILURES);
    await processJob(b.worker, jobId, receipt());
    b.clock.advance(56 * 60_000);
    expect((await processJob(b.worker, jobId, receipt('m-1', 2))).kind).toBe('stored');
    expect(b.service.created).toHaveLength(1);
  });

  it('regenerates once the service refuses the kept links, and not before', async () => {
    const b = memoryBench();
    b.service.linksLive(60 * 60_000, b.clock.now);
    const jobId = await oneJob(b);
    b.store.failNext(new DocrelayError('STORAGE_WRITE_FAILED', 'down', { retryable: true }), COPY_FAILURES);
    await processJob(b.worker, jobId, receipt());
    b.clock.advance(61 * 60_000);
    const downloads = b.service.downloads.length;
    expect((await processJob(b.worker, jobId, receipt('m-1', 2))).kind).toBe('stored');
    expect(b.service.created).toHaveLength(2);
    // The kept link was tried (refused), then the new document's.
    expect(b.service.downloads.length - downloads).toBe(2);
  });

  it('removes the files a dropped document left in the bucket, checkpointed or not', async () => {
    const b = memoryBench();
    const storage = { ...config.config.storage, keyPattern: '{integration}/{jobId}/{documentId}/{filename}' };
    const worker = { ...b.worker, config: { ...config, config: { ...config.config, storage } } };
    const jobId = await oneJob(b);
    // The file lands, then the write that records it fails (as for a worker killed between the two): the
    // attempt is retried, and by then the links have died, so a new document is asked for.
    const put = b.store.put.bind(b.store);
    b.store.put = async (request) => {
      const stored = await put(request);
      b.jobs.failNext('updateJob', new DocrelayError('JOB_STORE_UNAVAILABLE', 'down', { retryable: true }));
      return stored;
    };
    expect((await processJob(worker, jobId, receipt())).kind).toBe('retry');
    const first = [...b.store.objects.keys()];
    expect(first).toHaveLength(1);
    b.store.put = put;
    b.service.expireLinks();
    expect((await processJob(worker, jobId, receipt('m-1', 2))).kind).toBe('stored');
    const stored = await job(b, jobId);
    expect(b.service.created).toHaveLength(2);
    expect([...b.store.objects.keys()]).toEqual([stored.files[0]?.key]);
    expect(stored.files[0]?.key).not.toBe(first[0]);
  });

  it('goes on when the files of a dropped document cannot be removed, and says so', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.store.remove = async () => {
      throw new DocrelayError('STORAGE_WRITE_FAILED', 'S3 down', { retryable: true });
    };
    b.store.failNext(new DocrelayError('STORAGE_WRITE_FAILED', 'down', { retryable: true }), COPY_FAILURES);
    await processJob(b.worker, jobId, receipt());
    b.service.expireLinks();
    expect((await processJob(b.worker, jobId, receipt('m-1', 2))).kind).toBe('stored');
    expect(
      b.log.lines.filter((l) => l.message === 'could not remove the files of a dropped document'),
    ).toHaveLength(1);
  });

  it('gives up on an attempt whose links keep expiring (retryable)', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.service.failDownload('expire', 'expire', 'expire', 'expire');
    expect(await processJob(b.worker, jobId, receipt())).toMatchObject({
      kind: 'retry',
      error: { code: 'LINKS_EXPIRING' },
    });
  });

  it('refuses a truncated copy (no object kept) and retries', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.service.failDownload('truncate', 'truncate', 'truncate');
    expect(await processJob(b.worker, jobId, receipt())).toMatchObject({
      kind: 'retry',
      error: { code: 'COPY_SIZE_MISMATCH' },
    });
    expect(b.store.objects.size).toBe(0);
    expect((await processJob(b.worker, jobId, receipt('m-1', 2))).kind).toBe('stored');
  });

  it("takes the transport's framing over the service's size, whose unit is not documented", async () => {
    const kib = (bytes: number) => Math.ceil(bytes / 1024);
    for (const framing of ['length', 'chunked'] as const) {
      const b = memoryBench();
      b.service.announceSizes(kib);
      b.service.frameDownloads(framing);
      const jobId = await oneJob(b);
      expect((await processJob(b.worker, jobId, receipt())).kind).toBe('stored');
      const file = (await job(b, jobId)).files[0];
      expect(file).toMatchObject({ size: 1 });
      expect(file?.storedSize).toBeGreaterThan(1);
      expect(b.log.lines.some((l) => l.message.startsWith('the service announced a size'))).toBe(true);
    }
  });

  it("checks a body that ends with its connection against the service's size: the one guard left", async () => {
    const b = memoryBench();
    b.service.frameDownloads('close');
    const jobId = await oneJob(b);
    expect((await processJob(b.worker, jobId, receipt())).kind).toBe('stored');
    b.service.announceSizes((bytes) => bytes + 1);
    const other = await oneJob(b, 'n-2');
    expect(await processJob(b.worker, other, receipt('m-2'))).toMatchObject({
      kind: 'retry',
      error: { code: 'COPY_SIZE_MISMATCH' },
    });
    // No size at all: nothing to check it against, and the bytes read are what is recorded.
    b.service.announceSizes(() => undefined);
    const third = await oneJob(b, 'n-3');
    expect((await processJob(b.worker, third, receipt('m-3'))).kind).toBe('stored');
    expect((await job(b, third)).files[0]?.size).toBeUndefined();
  });

  it('asks for a new document when kept links are on an origin no longer allowed (the service moved)', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.service.failDownload(...Array.from({ length: COPY_FAILURES }, () => 'truncate' as const));
    expect((await processJob(b.worker, jobId, receipt())).kind).toBe('retry');
    expect(await job(b, jobId)).toMatchObject({ status: 'created', documentsRequested: 1 });
    b.service.failDownload(new DocgenDownloadOriginRefusedError('outside the allowed origins'));
    expect((await processJob(b.worker, jobId, receipt('m-1', 2))).kind).toBe('stored');
    expect(await job(b, jobId)).toMatchObject({ status: 'stored', documentsRequested: 2 });
  });

  it('fails the job when links the service has just made are on a refused origin (the config is wrong)', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.service.failDownload(new DocgenDownloadOriginRefusedError('outside the allowed origins'));
    expect(await processJob(b.worker, jobId, receipt())).toMatchObject({
      kind: 'failed',
      job: { error: { code: 'DOCGEN_DOWNLOAD_ORIGIN_REFUSED' } },
    });
    expect(b.service.created).toHaveLength(1);
  });

  /** A stored job whose file sits at `notes/old-name.docx`: a document of another file name, as a replay meets. */
  async function storedUnderOldName(b: Bench, id: string): Promise<JobRecord> {
    const jobId = await oneJob(b, id);
    expect((await processJob(b.worker, jobId, receipt(`m-${id}`))).kind).toBe('stored');
    const stored = await job(b, jobId);
    const old = b.store.objects.get(stored.files[0]?.key as string);
    b.store.objects.delete(stored.files[0]?.key as string);
    b.store.objects.set('notes/old-name.docx', old as NonNullable<typeof old>);
    return b.jobs.updateJob(stored, {
      files: stored.files.map((file) => ({ ...file, key: 'notes/old-name.docx' })),
    });
  }

  it("removes a fresh replay's previous files once the new ones are stored", async () => {
    const b = memoryBench();
    const stored = await storedUnderOldName(b, 'r-1');
    await resetJobForReplay(b.jobs, stored, { fresh: true, now: () => b.clock.ms });
    expect((await job(b, stored.jobId)).replacedFiles).toEqual([
      { bucket: b.store.bucket, key: 'notes/old-name.docx' },
    ]);
    expect((await processJob(b.worker, stored.jobId, receipt('m-r-1b'))).kind).toBe('stored');
    const after = await job(b, stored.jobId);
    expect(b.store.objects.has('notes/old-name.docx')).toBe(false);
    expect(b.store.objects.has(after.files[0]?.key as string)).toBe(true);
    expect(after.replacedFiles).toBeUndefined();
  });

  it('keeps them listed through a fresh run that fails, and removes them when a later run is stored', async () => {
    const b = memoryBench();
    const stored = await storedUnderOldName(b, 'r-2');
    await resetJobForReplay(b.jobs, stored, { fresh: true, now: () => b.clock.ms });
    b.service.failCreate(new DocgenBadRequestError('400 bad'));
    expect((await processJob(b.worker, stored.jobId, receipt('m-r-2b'))).kind).toBe('failed');
    expect(b.store.objects.has('notes/old-name.docx')).toBe(true);
    await resetJobForReplay(b.jobs, await job(b, stored.jobId), { now: () => b.clock.ms });
    expect((await processJob(b.worker, stored.jobId, receipt('m-r-2c'))).kind).toBe('stored');
    expect(b.store.objects.has('notes/old-name.docx')).toBe(false);
    expect((await job(b, stored.jobId)).replacedFiles).toBeUndefined();
  });

  it('downloads again within the attempt while the link lives, without a second document', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.service.failDownload('truncate', 'truncate');
    const started = b.clock.ms;
    expect((await processJob(b.worker, jobId, receipt())).kind).toBe('stored');
    expect(b.service.created).toHaveLength(1);
    expect(b.clock.ms - started).toBe(250 + 500);
    expect((await job(b, jobId)).attempts).toBe(1);
  });

  it('downloads again without a pause when the link should expire before it ends, not a new document', async () => {
    const b = memoryBench();
    const worker = { ...b.worker, linkLifetimeMs: 900 };
    const jobId = await oneJob(b);
    b.service.failDownload('truncate');
    const started = b.clock.ms;
    expect((await processJob(worker, jobId, receipt())).kind).toBe('stored');
    expect(b.clock.ms).toBe(started);
    expect(b.service.created).toHaveLength(1);
    expect(await job(b, jobId)).toMatchObject({ attempts: 1, documentsRequested: 1 });
  });

  it('fits the next attempt into the links when the copy keeps failing', async () => {
    const b = memoryBench();
    const worker = { ...b.worker, linkLifetimeMs: 20_000, retryBaseSeconds: 60 };
    const jobId = await oneJob(b);
    b.store.failNext(
      new DocrelayError('STORAGE_WRITE_FAILED', 'S3 down', { retryable: true }),
      COPY_FAILURES,
    );
    const outcome = await processJob(worker, jobId, receipt());
    // 20 s of link less 0.75 s of pauses: a quarter of what is left, 4 s, instead of the 30 s backoff.
    expect(outcome).toMatchObject({ kind: 'retry', delaySeconds: 4 });
    expect((await processJob(worker, jobId, receipt('m-1', 2))).kind).toBe('stored');
    expect(b.service.created).toHaveLength(1);
  });

  it('backs off at least as long as a rate limit asks', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.service.failCreate(new DocgenRateLimitedError('429', { retryAfterMs: 30_000 }));
    const outcome = await processJob(b.worker, jobId, receipt());
    expect(outcome).toMatchObject({ kind: 'retry', delaySeconds: 30 });
    expect(await job(b, jobId)).toMatchObject({ status: 'queued', outageRetries: 1 });
    expect((await job(b, jobId)).leaseUntil).toBe(b.clock.ms + 30_000 + 60_000);
  });

  it('waits out a Retry-After with a delayed message that holds the job, not counted as an attempt', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.service.failCreate(new DocgenRateLimitedError('429', { retryAfterMs: 25_000 }));
    const requeue = jest.fn(async () => 'm-later');
    expect(await processJob(b.worker, jobId, receipt('m-1', 1, { requeue }))).toMatchObject({
      kind: 'requeued',
      delaySeconds: 25,
    });
    expect(requeue).toHaveBeenCalledWith(25);
    expect(await job(b, jobId)).toMatchObject({ leaseOwner: 'm-later', outageRetries: 1 });
    // The original message, should it come back before then, is dropped: the new one holds the job.
    expect((await processJob(b.worker, jobId, receipt('m-1', 2))).kind).toBe('skipped');
    expect(b.service.created).toHaveLength(0);
  });

  it('fails a job for good on a non-retryable error, publishing Document Failed', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.service.failCreate(new DocgenBadRequestError('the service refused the data'));
    expect((await processJob(b.worker, jobId, receipt())).kind).toBe('failed');
    expect(await job(b, jobId)).toMatchObject({ status: 'failed', error: { code: 'DOCGEN_BAD_REQUEST' } });
    expect(b.events.events.map((e) => e.type)).toEqual(['Document Failed']);
  });

  it('fails with RETRIES_EXHAUSTED at the last receive of a retryable error', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.store.failNext(new DocrelayError('STORAGE_WRITE_FAILED', 'down', { retryable: true }), COPY_FAILURES);
    expect((await processJob(b.worker, jobId, receipt('m-1', 3))).kind).toBe('failed');
    expect(await job(b, jobId)).toMatchObject({
      error: { code: 'RETRIES_EXHAUSTED' },
      lastError: { code: 'STORAGE_WRITE_FAILED' },
    });
  });

  it('waits out a service outage past the last receive with a new message that holds the job', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.service.failCreate(new DocgenUnavailableError('503'));
    const requeue = jest.fn(async () => 'm-next');
    const outcome = await processJob(b.worker, jobId, receipt('m-1', 3, { requeue }));
    expect(outcome.kind).toBe('requeued');
    expect(requeue).toHaveBeenCalledTimes(1);
    expect(await job(b, jobId)).toMatchObject({ status: 'queued', leaseOwner: 'm-next', outageRetries: 1 });
    // The new message then runs the job, even though its lease names it.
    expect((await processJob(b.worker, jobId, receipt('m-next', 1))).kind).toBe('stored');
  });

  it('goes on as a retry when the new message cannot be sent', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.service.failCreate(new DocgenUnavailableError('503'));
    const requeue = jest.fn(async (): Promise<string> => {
      throw new Error('queue down');
    });
    expect((await processJob(b.worker, jobId, receipt('m-1', 3, { requeue }))).kind).toBe('retry');
  });

  it('fails a job with ATTEMPTS_EXHAUSTED once it started jobs.maxAttempts attempts (its worker kept dying)', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    // Four claims whose attempts never settled (maxAttempts is 4 in the test config).
    for (let i = 1; i <= 4; i += 1) {
      const current = await job(b, jobId);
      await b.jobs.updateJob(current, {
        status: 'processing',
        attempts: i,
        leaseOwner: `m-dead-${i}`,
        leaseUntil: b.clock.ms - 1,
      });
    }
    const outcome = await processJob(b.worker, jobId, receipt('m-5'));
    expect(outcome.kind).toBe('failed');
    expect(await job(b, jobId)).toMatchObject({ status: 'failed', error: { code: 'ATTEMPTS_EXHAUSTED' } });
    expect((await job(b, jobId)).error?.message).toMatch(/^attempts-exhausted: 4 attempts/);
    expect(b.service.created).toHaveLength(0);
    expect(b.events.events.map((e) => e.type)).toEqual(['Document Failed']);
  });

  it('does not count attempts that waited out an outage against maxAttempts', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    const current = await job(b, jobId);
    await b.jobs.updateJob(current, { attempts: 6, outageRetries: 5 });
    expect((await processJob(b.worker, jobId, receipt())).kind).toBe('stored');
  });

  it('fails a job whose rule was removed from the configuration, or whose delivery is gone', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    const current = await job(b, jobId);
    await b.jobs.updateJob(current, { rule: 'gone' });
    expect((await processJob(b.worker, jobId, receipt())).kind).toBe('failed');
    expect((await job(b, jobId)).error?.code).toBe('RULE_REMOVED');

    const second = await oneJob(b, 'n-2');
    b.jobs.deliveries.clear();
    expect((await processJob(b.worker, second, receipt())).kind).toBe('failed');
    expect((await job(b, second)).error?.code).toBe('DELIVERY_MISSING');
  });

  it('keeps the stored document when the event cannot be published, and the message to publish it again', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.events.failNext(new Error('bus down'));
    const first = await processJob(b.worker, jobId, receipt('m-1', 1));
    expect(first).toMatchObject({ kind: 'stored', eventRetrySeconds: 5 });
    expect(await job(b, jobId)).toMatchObject({ status: 'stored', settledBy: 'm-1' });
    expect(b.events.events).toEqual([]);
    expect(b.log.lines.some((l) => l.message === 'could not publish the event')).toBe(true);

    // The same message comes back: the event goes out, once, and the message can go.
    const again = await processJob(b.worker, jobId, receipt('m-1', 2));
    expect(again).toEqual({
      kind: 'skipped',
      job: expect.objectContaining({ status: 'stored' }),
      settledByThis: true,
    });
    expect(b.events.events.map((e) => [e.type, e.detail.jobId])).toEqual([['Document Stored', jobId]]);
  });

  it('publishes the event again when the message that stored the job comes back (its worker died before the event)', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    await processJob(b.worker, jobId, receipt('m-1'));
    // What a worker killed between the job's last write and the event leaves: the job stored, no event.
    const [sent] = b.events.events.splice(0);
    expect(sent?.type).toBe('Document Stored');

    // Another message of the job (a duplicate, a resend) publishes nothing.
    expect((await processJob(b.worker, jobId, receipt('m-2'))).kind).toBe('skipped');
    expect(b.events.events).toEqual([]);
    // Its own message, returning after the visibility timeout, does: the same event.
    expect((await processJob(b.worker, jobId, receipt('m-1', 2))).kind).toBe('skipped');
    expect(b.events.events).toEqual([sent]);
  });

  it('doubles the wait while the event keeps failing, and gives it up (logged, counted) at the last receive', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    for (let i = 0; i < 3; i += 1) b.events.failNext(new Error('AccessDeniedException'));
    expect(await processJob(b.worker, jobId, receipt('m-1', 1))).toMatchObject({ eventRetrySeconds: 5 });
    expect(await processJob(b.worker, jobId, receipt('m-1', 2))).toMatchObject({
      kind: 'skipped',
      eventRetrySeconds: 10,
    });
    const last = await processJob(b.worker, jobId, receipt('m-1', 3));
    expect(last).toMatchObject({ kind: 'skipped', eventLost: true });
    expect(last).not.toHaveProperty('eventRetrySeconds');
    expect(b.log.lines.some((l) => l.message.includes('given up'))).toBe(true);
    expect(b.events.events).toEqual([]);
  });

  it('publishes a failed job’s event again the same way', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    await b.jobs.updateJob(await job(b, jobId), { rule: 'gone' });
    b.events.failNext(new Error('bus down'));
    expect(await processJob(b.worker, jobId, receipt('m-7'))).toMatchObject({
      kind: 'failed',
      eventRetrySeconds: 5,
    });
    expect(await job(b, jobId)).toMatchObject({ status: 'failed', settledBy: 'm-7' });
    await processJob(b.worker, jobId, receipt('m-7', 2));
    expect(b.events.events.map((e) => e.type)).toEqual(['Document Failed']);
  });

  it('lets a table failure under the job propagate (the message returns)', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.jobs.failNext('claimJob', new DocrelayError('JOB_STORE_UNAVAILABLE', 'down', { retryable: true }));
    await expect(processJob(b.worker, jobId, receipt())).rejects.toMatchObject({
      code: 'JOB_STORE_UNAVAILABLE',
    });
  });

  it('logs, and keeps the retry, when releasing the job fails', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.service.failCreate(new DocgenUnavailableError('503'));
    // The claim (claimJob) succeeds; the release after the failure, the first updateJob, does not.
    const original = b.jobs.updateJob.bind(b.jobs);
    let calls = 0;
    b.jobs.updateJob = async (j, c) => {
      calls += 1;
      if (calls === 1) throw new DocrelayError('JOB_STORE_UNAVAILABLE', 'down', { retryable: true });
      return original(j, c);
    };
    expect((await processJob(b.worker, jobId, receipt())).kind).toBe('retry');
    expect(b.log.lines.some((l) => l.message === 'could not release the job')).toBe(true);
  });
});

describe('the attempt history', () => {
  it('records each attempt that did not finish the job, with when and why, and keeps it once stored', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.service.failCreate(new DocgenUnavailableError('503 once'));
    await processJob(b.worker, jobId, receipt('m-1', 1));
    b.clock.advance(5_000);
    b.store.failNext(
      new DocrelayError('STORAGE_WRITE_FAILED', 'S3 down', { retryable: true }),
      COPY_FAILURES,
    );
    await processJob(b.worker, jobId, receipt('m-1', 2));
    b.clock.advance(5_000);
    expect((await processJob(b.worker, jobId, receipt('m-1', 3))).kind).toBe('stored');
    expect((await job(b, jobId)).attemptErrors).toEqual([
      { attempt: 1, at: '2026-01-01T00:00:00.000Z', code: 'DOCGEN_UNAVAILABLE', message: '503 once' },
      { attempt: 2, at: '2026-01-01T00:00:05.750Z', code: 'STORAGE_WRITE_FAILED', message: 'S3 down' },
    ]);
  });

  it('records the error that failed the job, and keeps only the last ten', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    const current = await job(b, jobId);
    const old = Array.from({ length: 10 }, (_, i) => ({
      attempt: i + 1,
      at: 'then',
      code: 'OLD',
      message: 'old',
    }));
    await b.jobs.updateJob(current, { attemptErrors: old, attempts: 2, outageRetries: 0 });
    b.service.failCreate(new DocgenBadRequestError('refused'));
    await processJob(b.worker, jobId, receipt());
    const history = (await job(b, jobId)).attemptErrors ?? [];
    expect(history).toHaveLength(10);
    expect(history.at(-1)).toMatchObject({ attempt: 3, code: 'DOCGEN_BAD_REQUEST' });
    expect(history[0]?.attempt).toBe(2);
  });
});
