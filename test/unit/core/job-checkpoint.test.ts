import { DocrelayError } from '../../../functions/commons/errors';
import { acceptWebhook } from '../../../functions/core/accept-delivery';
import type { JobChanges, JobRecord } from '../../../functions/core/job';
import { CHECKPOINT_AFTER_MS } from '../../../functions/core/job-checkpoint';
import { processJob, type Receipt } from '../../../functions/core/process-job';
import { MAX_COPY_RETRIES_PER_ATTEMPT } from '../../../functions/core/retry-policy';
import { memoryBench, signedWebhook } from './support';

type Bench = ReturnType<typeof memoryBench>;

/**
 * A bench whose key pattern gives the job no prefix of its own (the document's id comes before the job's), so
 * a file's key is recorded before the file lands (JobCheckpoint.announce).
 */
function announcingBench(): Bench {
  const b = memoryBench();
  const storage = {
    ...b.worker.config.config.storage,
    keyPattern: '{integration}/{documentId}/{jobId}-{filename}',
  };
  return {
    ...b,
    worker: { ...b.worker, config: { ...b.worker.config, config: { ...b.worker.config.config, storage } } },
  };
}

const receipt = (messageId = 'm-1', receiveCount = 1): Receipt => ({ messageId, receiveCount });

async function oneJob(b: Bench, id = 'n-1'): Promise<string> {
  const answer = await acceptWebhook(b.ingest, signedWebhook('notes', { id, customer: 'Ada', number: '42' }));
  return answer.body.jobs[0]?.jobId as string;
}

const job = async (b: Bench, jobId: string): Promise<JobRecord> => (await b.jobs.getJob(jobId)) as JobRecord;

/** A promise and its resolver: a step the test releases. */
function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open: (value: T) => void = () => undefined;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** What a job update was: its status, or `listed` for a key listed before its file lands (announce). */
const kind = (changes: JobChanges): string =>
  changes.status ??
  (Object.keys(changes).join() === 'replacedFiles' ? 'listed' : Object.keys(changes).join());

/** Records every job update (its changes) and how many were in flight at once. */
function recordUpdates(b: Bench) {
  const update = b.jobs.updateJob.bind(b.jobs);
  const seen = { changes: [] as JobChanges[], inFlight: 0, maxInFlight: 0 };
  b.jobs.updateJob = async (current, changes) => {
    seen.changes.push(changes);
    seen.inFlight += 1;
    seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
    try {
      return await update(current, changes);
    } finally {
      seen.inFlight -= 1;
    }
  };
  return seen;
}

/** Holds every download until the test opens the gate; `requested` resolves when the first is asked for. */
function holdDownloads(b: Bench) {
  const download = b.service.download.bind(b.service);
  const requested = gate();
  const release = gate();
  b.service.download = async (url, options) => {
    requested.open();
    await release.promise;
    return download(url, options);
  };
  return { requested: requested.promise, release: () => release.open() };
}

/** Lets queued promise callbacks run (the in-memory adapters answer within a few turns). */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i += 1) await Promise.resolve();
};

/** Waits (a bounded number of turns of the event loop) until `done()`; fails the test if it never is. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !done(); i += 1) await new Promise((resolve) => setImmediate(resolve));
  expect(done()).toBe(true);
}

/** Makes the job's writes fail from the first one after its file lands, `times` times. */
function failWritesAfterPut(b: Bench, error: unknown, times = 1): void {
  const put = b.store.put.bind(b.store);
  b.store.put = async (request) => {
    const stored = await put(request);
    b.store.put = put;
    b.jobs.failNext('updateJob', error, times);
    return stored;
  };
}

/** Fake timers (not the promise queue), and a wait for the checkpoint's timer to be set. */
function fakeTimers(): { armed: () => Promise<void> } {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate', 'Date'] });
  const setTimer = jest.spyOn(global, 'setTimeout');
  return {
    armed: async () => {
      const set = () => setTimer.mock.calls.some(([, ms]) => ms === CHECKPOINT_AFTER_MS);
      for (let i = 0; i < 100 && !set(); i += 1) await Promise.resolve();
      expect(set()).toBe(true);
    },
  };
}

/** Makes the worker "die" once its file landed: every job write after the put fails, until `revive()`. */
function dieAfterPut(b: Bench): { revive: () => void } {
  let dead = false;
  const put = b.store.put.bind(b.store);
  b.store.put = async (request) => {
    const stored = await put(request);
    dead = true;
    return stored;
  };
  const update = b.jobs.updateJob.bind(b.jobs);
  b.jobs.updateJob = async (current, changes) => {
    if (dead) throw new DocrelayError('JOB_STORE_UNAVAILABLE', 'the worker died', { retryable: true });
    return update(current, changes);
  };
  return {
    revive: () => {
      b.store.put = put;
      dead = false;
    },
  };
}

describe("the created checkpoint under the job's own key prefix (the default key pattern)", () => {
  it('costs a quick one-file copy two job writes: the claim, and the write that stores', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    const updates = recordUpdates(b);
    expect((await processJob(b.worker, jobId, receipt())).kind).toBe('stored');
    expect(b.jobs.writes.filter((w) => w.key === jobId).map((w) => w.operation)).toEqual([
      'claimJob',
      'updateJob',
    ]);
    expect(updates.changes.map(kind)).toEqual(['stored']);
    expect(await job(b, jobId)).toMatchObject({ status: 'stored', documentsRequested: 1, attempts: 1 });
  });

  it('finds and removes the file a dead attempt left unrecorded once a later attempt stored the job', async () => {
    const b = memoryBench();
    // Each new document names its file anew (as a service may: the key depends on it).
    const create = b.service.createDocument.bind(b.service);
    let documents = 0;
    b.service.createDocument = async (request) => {
      const created = await create(request);
      documents += 1;
      return {
        ...created,
        files: created.files.map((f) => ({ ...f, filename: `${documents}-${f.filename}` })),
      };
    };
    const jobId = await oneJob(b);
    const death = dieAfterPut(b);
    await processJob(b.worker, jobId, receipt());
    const [orphan] = [...b.store.objects.keys()];
    // Nothing records it: no write was spent on it.
    expect(await job(b, jobId)).toMatchObject({ status: 'processing', attempts: 1 });
    expect((await job(b, jobId)).replacedFiles).toBeUndefined();
    death.revive();
    expect((await processJob(b.worker, jobId, receipt('m-1', 2))).kind).toBe('stored');
    const stored = await job(b, jobId);
    expect(b.service.created).toHaveLength(2);
    expect(stored.files[0]?.key).not.toBe(orphan);
    expect([...b.store.objects.keys()]).toEqual([stored.files[0]?.key]);
    expect(
      b.log.lines.filter((l) => l.message === 'removed a file an earlier attempt left unrecorded'),
    ).toHaveLength(1);
  });

  it('lists nothing after a first attempt, and keeps a listing failure from failing the job', async () => {
    const b = memoryBench();
    const list = jest.spyOn(b.store, 'list');
    const first = await oneJob(b, 'n-1');
    expect((await processJob(b.worker, first, receipt())).kind).toBe('stored');
    expect(list).not.toHaveBeenCalled();
    const second = await oneJob(b, 'n-2');
    const death = dieAfterPut(b);
    await processJob(b.worker, second, receipt('m-2'));
    death.revive();
    list.mockRejectedValueOnce(new Error('AccessDenied'));
    expect((await processJob(b.worker, second, receipt('m-2', 2))).kind).toBe('stored');
    expect(b.log.lines.some((l) => l.message === 'could not look for files an earlier attempt left')).toBe(
      true,
    );
  });
});

/**
 * A one-file job whose download is held, on fake timers, with the checkpoint's timer set: the copy is running
 * and nothing after the claim and the listed key has been written.
 */
async function heldCopy() {
  const timers = fakeTimers();
  const b = announcingBench();
  const jobId = await oneJob(b);
  const updates = recordUpdates(b);
  const held = holdDownloads(b);
  const outcome = processJob(b.worker, jobId, receipt());
  await held.requested;
  await timers.armed();
  return { b, jobId, updates, held, outcome };
}

describe('the created checkpoint', () => {
  afterEach(() => {
    jest.restoreAllMocks();
    jest.useRealTimers();
  });

  it('is merged into the store write of a quick one-file copy: no `created` write of its own', async () => {
    const b = announcingBench();
    const jobId = await oneJob(b);
    const updates = recordUpdates(b);
    expect((await processJob(b.worker, jobId, receipt())).kind).toBe('stored');
    // The claim, the file's key listed before it lands (no index touched), and one write that stores.
    expect(b.jobs.writes.filter((w) => w.key === jobId).map((w) => w.operation)).toEqual([
      'claimJob',
      'updateJob',
      'updateJob',
    ]);
    expect(updates.changes.map(kind)).toEqual(['listed', 'stored']);
    expect(updates.changes[1]).toMatchObject({
      documentsRequested: 1,
      files: [{ storedAt: expect.any(String) }],
    });
    expect(updates.changes[1]).toHaveProperty('replacedFiles', undefined);
    const stored = await job(b, jobId);
    expect(stored).toMatchObject({ status: 'stored', documentsRequested: 1, attempts: 1 });
    expect(stored.document?.sealedLinks).toBeUndefined();
    expect(stored.replacedFiles).toBeUndefined();
    expect(b.log.lines.filter((l) => l.message === 'document created')).toHaveLength(1);
  });

  it('leaves no object unnamed when the worker dies between its file landing and the store write', async () => {
    const b = announcingBench();
    const jobId = await oneJob(b);
    // A dead worker writes nothing more once its file landed.
    const death = dieAfterPut(b);
    await processJob(b.worker, jobId, receipt());
    const [orphan] = [...b.store.objects.keys()];
    expect(await job(b, jobId)).toMatchObject({
      status: 'processing',
      replacedFiles: [{ bucket: b.store.bucket, key: orphan }],
    });
    death.revive();
    // Its message returns: no checkpoint, so a new document, under another key; the first file goes.
    expect((await processJob(b.worker, jobId, receipt('m-1', 2))).kind).toBe('stored');
    const stored = await job(b, jobId);
    expect(b.service.created).toHaveLength(2);
    expect([...b.store.objects.keys()]).toEqual([stored.files[0]?.key]);
    expect(stored.files[0]?.key).not.toBe(orphan);
    expect(stored.replacedFiles).toBeUndefined();
  });

  it('is written beside a copy still running CHECKPOINT_AFTER_MS after the create answer, then the store write', async () => {
    const { b, jobId, updates, held, outcome } = await heldCopy();
    jest.advanceTimersByTime(CHECKPOINT_AFTER_MS - 1);
    await settle();
    expect((await job(b, jobId)).status).toBe('processing');
    jest.advanceTimersByTime(1);
    await settle();
    const checkpoint = await job(b, jobId);
    expect(checkpoint).toMatchObject({ status: 'created', documentsRequested: 1 });
    expect(checkpoint.document?.sealedLinks).toEqual(expect.any(String));
    held.release();
    expect((await outcome).kind).toBe('stored');
    expect(updates.changes.map(kind)).toEqual(['listed', 'created', 'stored']);
    // The checkpoint takes the listed key off again; the store write carries the file and `stored` only.
    expect(updates.changes[1]).toHaveProperty('replacedFiles', undefined);
    expect(updates.changes[2]).not.toHaveProperty('documentsRequested');
    expect(await job(b, jobId)).toMatchObject({ status: 'stored', documentsRequested: 1 });
  });

  it('never has two writes in flight: the store write waits for the checkpoint write begun beside it', async () => {
    const timers = fakeTimers();
    const b = announcingBench();
    const jobId = await oneJob(b);
    const checkpointWrite = gate();
    const update = b.jobs.updateJob.bind(b.jobs);
    b.jobs.updateJob = async (current, changes) => {
      if (changes.status === 'created') await checkpointWrite.promise;
      return update(current, changes);
    };
    const updates = recordUpdates(b);
    const held = holdDownloads(b);
    const outcome = processJob(b.worker, jobId, receipt());
    await held.requested;
    await timers.armed();
    jest.advanceTimersByTime(CHECKPOINT_AFTER_MS);
    held.release();
    // The file lands while the checkpoint's write is still held.
    for (let i = 0; i < 100 && !b.log.lines.some((l) => l.message === 'file stored'); i += 1) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    await settle();
    expect(b.store.objects.size).toBe(1);
    expect(updates.changes.map(kind)).toEqual(['listed', 'created']);
    checkpointWrite.open();
    expect((await outcome).kind).toBe('stored');
    expect(updates.changes.map(kind)).toEqual(['listed', 'created', 'stored']);
    expect(updates.maxInFlight).toBe(1);
  });

  it('is carried by the store write when its own write beside the copy failed', async () => {
    const { b, jobId, updates, held, outcome } = await heldCopy();
    // The file's key is listed first: the failure is the checkpoint's.
    await until(() => updates.changes.length === 1);
    b.jobs.failNext('updateJob', new DocrelayError('JOB_STORE_UNAVAILABLE', 'down', { retryable: true }));
    jest.advanceTimersByTime(CHECKPOINT_AFTER_MS);
    await settle();
    expect(b.log.lines.filter((l) => l.message === 'could not write the checkpoint')).toHaveLength(1);
    held.release();
    expect((await outcome).kind).toBe('stored');
    expect(updates.changes.map(kind)).toEqual(['listed', 'created', 'stored']);
    expect(await job(b, jobId)).toMatchObject({ status: 'stored', documentsRequested: 1 });
    expect((await job(b, jobId)).replacedFiles).toBeUndefined();
  });

  it('is written before a failed copy is released, and the retry copies from its links', async () => {
    const b = announcingBench();
    const jobId = await oneJob(b);
    const updates = recordUpdates(b);
    b.store.failNext(
      new DocrelayError('STORAGE_WRITE_FAILED', 'S3 down', { retryable: true }),
      MAX_COPY_RETRIES_PER_ATTEMPT + 1,
    );
    expect(await processJob(b.worker, jobId, receipt())).toMatchObject({ kind: 'retry' });
    // The key listed, the checkpoint (the key off again: the checkpoint names it), the release that keeps it.
    expect(updates.changes.map(kind)).toEqual(['listed', 'created', 'created']);
    expect(updates.changes[2]).toMatchObject({ lastError: { code: 'STORAGE_WRITE_FAILED' } });
    expect((await job(b, jobId)).document?.sealedLinks).toEqual(expect.any(String));
    expect((await processJob(b.worker, jobId, receipt('m-1', 2))).kind).toBe('stored');
    expect(b.service.created).toHaveLength(1);
    expect(await job(b, jobId)).toMatchObject({ status: 'stored', documentsRequested: 1, attempts: 2 });
  });

  it('is written before the pause of a copy retried within the attempt, so a worker dying in it loses nothing', async () => {
    const b = announcingBench();
    const jobId = await oneJob(b);
    b.service.failDownload('truncate');
    const statusAtPause: string[] = [];
    const worker = {
      ...b.worker,
      sleep: async (ms: number) => {
        statusAtPause.push((await job(b, jobId)).status);
        b.clock.advance(ms);
      },
    };
    expect((await processJob(worker, jobId, receipt())).kind).toBe('stored');
    expect(statusAtPause).toEqual(['created']);
    expect(b.service.created).toHaveLength(1);
  });

  it('is written when the store write itself fails, before the job is settled', async () => {
    const b = announcingBench();
    const jobId = await oneJob(b);
    const updates = recordUpdates(b);
    // Not retryable: the attempt ends at once.
    failWritesAfterPut(b, new DocrelayError('JOB_STORE_UNAVAILABLE', 'down', { retryable: false }));
    expect(await processJob(b.worker, jobId, receipt())).toMatchObject({ kind: 'failed' });
    // The merged write failed; the checkpoint alone went next, before the job was settled.
    expect(updates.changes.map(kind)).toEqual(['listed', 'stored', 'created', 'failed']);
    expect(b.service.created).toHaveLength(1);
  });

  it('is written on the way out when the write after a failed copy fails too', async () => {
    const b = announcingBench();
    const jobId = await oneJob(b);
    const updates = recordUpdates(b);
    // The store write and the checkpoint written after it both fail; the attempt's end writes it once more.
    failWritesAfterPut(b, new DocrelayError('JOB_STORE_UNAVAILABLE', 'down', { retryable: true }), 2);
    expect(await processJob(b.worker, jobId, receipt())).toMatchObject({ kind: 'retry' });
    expect(updates.changes.map(kind)).toEqual(['listed', 'stored', 'created', 'created', 'created']);
    expect(await job(b, jobId)).toMatchObject({
      status: 'created',
      lastError: { code: 'JOB_STORE_UNAVAILABLE' },
    });
    expect((await processJob(b.worker, jobId, receipt('m-1', 2))).kind).toBe('stored');
    expect(b.service.created).toHaveLength(1);
  });

  it('goes with the first file of several, and the last file carries `stored`', async () => {
    const b = announcingBench();
    const create = b.service.createDocument.bind(b.service);
    // The whole release pack: both of the template's files in one document.
    b.service.createDocument = async ({ templateFileId: _one, ...request }) => create(request);
    const answer = await acceptWebhook(
      b.ingest,
      signedWebhook('releases', { name: 'v1', repo: 'docrelay', draft: true }),
    );
    const jobId = answer.body.jobs[0]?.jobId as string;
    const updates = recordUpdates(b);
    expect((await processJob(b.worker, jobId, receipt())).kind).toBe('stored');
    expect(updates.changes.map(kind)).toEqual(['listed', 'created', 'stored']);
    expect(updates.changes[1]?.files?.map((f) => f.storedAt !== undefined)).toEqual([true, false]);
    const stored = await job(b, jobId);
    expect(stored.files).toHaveLength(2);
    expect(stored.files.every((f) => f.storedAt !== undefined)).toBe(true);
    expect(stored.documentsRequested).toBe(1);
  });
});
