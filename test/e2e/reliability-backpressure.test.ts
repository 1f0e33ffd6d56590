/**
 * Back-pressure and outages: the service's limits are respected and its outages waited out. At most
 * `service.maxConcurrency` generations are in flight however full the queue is; 429 answers with Retry-After
 * slow the worker down (the client and the worker's backoff both wait at least what the service asked)
 * instead of failing jobs; and an outage that outlasts the queue's receive count fills the queue with
 * waiting jobs that all end stored once the service is back, with nothing in the dead-letter queue.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FaultSettings } from '../../local/emulator/faults';
import {
  jobRecords,
  postNote,
  storedProblems,
  waitForFinal,
  waitForQueueDrained,
} from './helpers/reliability';
import { repoRoot, startTestStack, type TestStack } from './helpers/stack';
import { waitUntil } from './helpers/wait';

jest.setTimeout(90_000);

const NO_FAULTS: Partial<FaultSettings> = {
  rate429: 0,
  rate5xx: 0,
  retryAfterSeconds: 0,
  generationLatencyMs: 0,
  failNext: { count: 0, status: 500 },
};

/** Posts `count` notes and returns their job ids (each answered 202). */
async function postNotes(t: TestStack, count: number, label: string): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const answer = await postNote(t, { title: `${label} ${i}` });
      expect(answer.status).toBe(202);
      return answer.body.jobs[0]?.jobId as string;
    }),
  );
}

describe('service.maxConcurrency', () => {
  let t: TestStack;
  let configDir: string;

  beforeAll(async () => {
    // The sample configuration with a cap of 2 (it ships with 4).
    configDir = await mkdtemp(join(tmpdir(), 'docrelay-e2e-cap-'));
    const yaml = await readFile(join(repoRoot, 'config/docrelay.yaml'), 'utf8');
    expect(yaml).toMatch(/maxConcurrency: 4\b/);
    await writeFile(
      join(configDir, 'docrelay.yaml'),
      yaml.replace(/maxConcurrency: 4\b/, 'maxConcurrency: 2'),
    );
    t = await startTestStack({
      env: { DOCRELAY_CONFIG: join(configDir, 'docrelay.yaml') },
      emulator: { seed: 21, faults: { generationLatencyMs: 1_000 } },
      startWorkers: false,
    });
  });

  afterAll(async () => {
    await t?.dispose();
    await rm(configDir, { recursive: true, force: true });
  });

  it('caps the generations in flight while the queue holds more', async () => {
    const jobIds = await postNotes(t, 10, 'Capped');
    expect((await t.queueCounts()).visible).toBe(10);

    t.stack.startWorkers();
    // The moment both slots are taken (an in-process counter, read every 10 ms: each generation holds its
    // slot for 1 s, so the first pair cannot slip by), the other jobs are still waiting for one.
    await waitUntil(
      'two generations in flight',
      async () => (t.emulator.stats().generationsInFlight >= 2 ? true : undefined),
      { timeoutMs: 45_000, intervalMs: 10 },
    );
    const waiting = (await jobRecords(t, jobIds)).filter((job) => job.status === 'queued').length;
    const jobs = await waitForFinal(t, jobIds, 60_000);

    const stats = t.emulator.stats();
    expect(waiting).toBeGreaterThan(0);
    expect(jobs.map((job) => job.status)).toEqual(jobIds.map(() => 'stored'));
    expect(stats.maxGenerationsInFlight).toBe(2);
    expect(stats.documentsCreated).toBe(jobIds.length);
  });
});

describe('rate limits and outages of the service', () => {
  let t: TestStack;

  beforeAll(async () => {
    t = await startTestStack({ emulator: { seed: 22 }, maxReceiveCount: 3, reconcileIntervalMs: 600_000 });
  });

  afterAll(async () => {
    await t?.dispose();
  });

  beforeEach(async () => {
    t.emulator.resume();
    t.emulator.setFaults(NO_FAULTS);
    t.emulator.resetStats();
    await t.drainDeadLetters();
  });

  it('waits at least Retry-After between requests, in the client and between attempts, and stores the job', async () => {
    // Eight 429s: two attempts of four requests each fail, the third attempt succeeds.
    t.emulator.setFaults({ failNext: { count: 8, status: 429 }, retryAfterSeconds: 1 });

    const [jobId] = await postNotes(t, 1, 'Rate limited');
    const [job] = await waitForFinal(t, [jobId as string], 45_000);

    const limited = t.emulator.stats().requests.filter((request) => request.status === 429);
    expect(limited).toHaveLength(8);
    const gaps = limited.slice(1).map((request, i) => request.at - (limited[i]?.at ?? 0));
    // Every wait honoured Retry-After (lower bounds only: a slow machine only makes them longer).
    expect(gaps.filter((gap) => gap < 950)).toEqual([]);
    expect(job?.status).toBe('stored');
    expect(job?.attempts).toBe(3);
    expect(t.emulator.stats().documentsCreated).toBe(1);
    expect(await t.drainDeadLetters()).toEqual([]);
  });

  it('stores every job through a burst of 429s without exhausting the receive count', async () => {
    // A fixed burst, not dice shared by concurrent requests: the first six requests, whichever jobs send
    // them, are 429s. An attempt fails only after four 429s of its own (the client's in-call retries), so
    // no job can fail two attempts (eight) whatever the interleaving; at most one can fail one.
    t.emulator.setFaults({ failNext: { count: 6, status: 429 }, retryAfterSeconds: 1 });

    const jobIds = await postNotes(t, 6, 'Throttled');
    const jobs = await waitForFinal(t, jobIds, 60_000);

    expect(t.emulator.stats().requests.filter((request) => request.status === 429)).toHaveLength(6);
    expect(jobs.map((job) => job.status)).toEqual(jobIds.map(() => 'stored'));
    expect(jobs.filter((job) => job.attempts >= 3).map((job) => job.jobId)).toEqual([]);
    await waitForQueueDrained(t, 30_000);
    expect(t.emulator.stats().documentsCreated).toBe(jobIds.length);
    expect(await t.drainDeadLetters()).toEqual([]);
  });

  it('accepts deliveries through an outage longer than the receive count allows, and drains them all afterwards', async () => {
    t.emulator.pause();

    const jobIds = await postNotes(t, 6, 'Outage');
    // Every job has failed more times than its message may be received (3): each was sent again as a new
    // message instead of failing. The queue holds them all, waiting.
    await waitUntil(
      'every job to outlast the receive count',
      async () => {
        const jobs = await jobRecords(t, jobIds);
        // A failed job ends the wait at once: the assertions below say what went wrong.
        return jobs.every((job) => job.attempts > 3) || jobs.some((job) => job.status === 'failed')
          ? true
          : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    // Read with the lanes stopped: a job sent on as a new message has two until its lane deletes the old one.
    await t.stack.stopWorkers();
    const during = await jobRecords(t, jobIds);
    const counts = await t.queueCounts();
    // Open (waiting, or in an attempt the outage fails), none failed; every one failed for the outage.
    expect(during.filter((job) => job.status !== 'queued' && job.status !== 'processing')).toEqual([]);
    expect(during.map((job) => job.lastError?.code)).toEqual(jobIds.map(() => 'DOCGEN_UNAVAILABLE'));
    expect(counts.visible + counts.inFlight + counts.delayed).toBe(jobIds.length);
    expect(await t.drainDeadLetters()).toEqual([]);
    expect(t.emulator.stats().requests.some((request) => request.fault === 'paused')).toBe(true);

    t.emulator.resume();
    t.stack.startWorkers();
    const jobs = await waitForFinal(t, jobIds, 60_000);

    expect(jobs.map((job) => job.status)).toEqual(jobIds.map(() => 'stored'));
    await waitForQueueDrained(t, 30_000);
    expect(t.emulator.stats().documentsCreated).toBe(jobIds.length);
    expect(await storedProblems(t, t.emulator.stats(), jobs, { wholeBucket: false })).toEqual([]);
    expect(await t.drainDeadLetters()).toEqual([]);
  });
});
