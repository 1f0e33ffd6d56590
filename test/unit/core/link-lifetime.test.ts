import { PassThrough } from 'node:stream';
import { InMemoryServiceEstimates } from '../../../functions/adapters/memory/service-estimates';
import { DocrelayError } from '../../../functions/commons/errors';
import { acceptWebhook } from '../../../functions/core/accept-delivery';
import { LinksExpiringError } from '../../../functions/core/errors';
import type { JobRecord } from '../../../functions/core/job';
import {
  DEFAULT_LINK_LIFETIME_MS,
  LinkLifetime,
  plannedLifetimeMs,
} from '../../../functions/core/link-lifetime';
import { processJob, type Receipt } from '../../../functions/core/process-job';
import {
  decideRetry,
  LINKS_EXPIRING_MAX_DELAY_SECONDS,
  MAX_COPY_RETRIES_PER_ATTEMPT,
} from '../../../functions/core/retry-policy';
import { RETRY_ATTEMPT_SERVICE_BUDGET_MS } from '../../../functions/core/worker-deps';
import { DocgenDownloadCutError } from '../../../functions/docgen/errors';
import { config, memoryBench, memoryLog, signedWebhook } from './support';

type Bench = ReturnType<typeof memoryBench>;

const receipt = (messageId = 'm-1', receiveCount = 1): Receipt => ({ messageId, receiveCount });

async function oneJob(b: Bench, id = 'n-1'): Promise<string> {
  const answer = await acceptWebhook(b.ingest, signedWebhook('notes', { id, customer: 'Ada', number: '42' }));
  return answer.body.jobs[0]?.jobId as string;
}

const job = async (b: Bench, jobId: string): Promise<JobRecord> => (await b.jobs.getJob(jobId)) as JobRecord;

const storeDown = () => new DocrelayError('STORAGE_WRITE_FAILED', 'down', { retryable: true });

/** The planned lifetime of a job's document: its recorded expiry less its creation. */
const plannedOf = (record: JobRecord): number =>
  Date.parse(record.document?.linksExpireAt ?? '') - Date.parse(record.document?.createdAt ?? '');

describe('plannedLifetimeMs', () => {
  it('is 55 minutes until a link was refused, then the youngest refusal less a tenth (at least 0.5 s)', () => {
    expect(plannedLifetimeMs(undefined)).toBe(DEFAULT_LINK_LIFETIME_MS);
    expect(plannedLifetimeMs({ servedAtMs: 90_000 })).toBe(DEFAULT_LINK_LIFETIME_MS);
    expect(plannedLifetimeMs({ refusedAtMs: 4_000 })).toBe(3_500);
    expect(plannedLifetimeMs({ refusedAtMs: 60_000, servedAtMs: 30_000 })).toBe(54_000);
  });

  it('takes the oldest served age when a link was served well past a refusal (that refusal was not the lifetime)', () => {
    expect(plannedLifetimeMs({ refusedAtMs: 1_000, servedAtMs: 20_000 })).toBe(18_000);
  });
});

describe('LinkLifetime', () => {
  it('shares what one estimator learns with another through the estimates, and a configured lifetime wins', async () => {
    const estimates = new InMemoryServiceEstimates();
    const log = memoryLog();
    let now = 0;
    const first = new LinkLifetime({ estimates, service: 'https://docgen.test', now: () => now });
    const second = new LinkLifetime({ estimates, service: 'https://docgen.test', now: () => now });
    const other = new LinkLifetime({ estimates, service: 'https://other.test', now: () => now });
    expect(await second.plannedMs(log)).toBe(DEFAULT_LINK_LIFETIME_MS);
    await first.observe(log, 'refused', 4_000);
    now += 30_000;
    expect(await second.plannedMs(log)).toBe(3_500);
    expect(await other.plannedMs(log)).toBe(DEFAULT_LINK_LIFETIME_MS);
    const configured = new LinkLifetime({
      estimates,
      service: 'https://docgen.test',
      configuredMs: 9_000,
      now: () => now,
    });
    expect(await configured.plannedMs(log)).toBe(9_000);
  });

  it('plans with what it knows when the estimates cannot be read, and says so', async () => {
    const log = memoryLog();
    const estimates = new InMemoryServiceEstimates();
    estimates.linkAges = async () => {
      throw new DocrelayError('JOB_STORE_UNAVAILABLE', 'down', { retryable: true });
    };
    const links = new LinkLifetime({ estimates, service: 's', now: () => 0 });
    await links.observe(log, 'refused', 2_000);
    expect(await links.plannedMs(log)).toBe(1_500);
    expect(log.lines.map((l) => l.message)).toContain('could not read the link lifetime estimate');
  });
});

describe('the worker and the links it learns', () => {
  it('learns the lifetime from a refused link and plans the next document with it, in every worker', async () => {
    const b = memoryBench();
    const estimates = new InMemoryServiceEstimates();
    const worker = { ...b.worker, estimates };
    b.service.linksLive(4_000, b.clock.now);
    const jobId = await oneJob(b);
    b.store.failNext(storeDown(), MAX_COPY_RETRIES_PER_ATTEMPT + 1);
    expect((await processJob(worker, jobId, receipt())).kind).toBe('retry');
    expect(plannedOf(await job(b, jobId))).toBe(DEFAULT_LINK_LIFETIME_MS);
    b.clock.advance(5_000);
    expect((await processJob(worker, jobId, receipt('m-1', 2))).kind).toBe('stored');
    expect(b.service.created).toHaveLength(2);
    // Refused 5.75 s after its create answer (5 s here, 0.75 s of pauses in the first attempt, whose last
    // download was served at 0.75 s).
    expect(await estimates.linkAges(config.config.service.baseUrl.replace(/\/$/, ''))).toEqual({
      refusedAtMs: 5_750,
      servedAtMs: 750,
    });
    expect(plannedOf(await job(b, jobId))).toBe(5_175);

    // Another worker (another invocation) plans with it from its first job.
    const next = await oneJob(b, 'n-2');
    b.store.failNext(storeDown(), MAX_COPY_RETRIES_PER_ATTEMPT + 1);
    expect((await processJob({ ...b.worker, estimates }, next, receipt('m-2'))).kind).toBe('retry');
    expect(plannedOf(await job(b, next))).toBe(5_175);
  });

  it('plans with service.linkLifetimeSeconds when it is configured', async () => {
    const b = memoryBench();
    const service = { ...config.config.service, linkLifetimeSeconds: 120 };
    const worker = { ...b.worker, config: { ...config, config: { ...config.config, service } } };
    const jobId = await oneJob(b);
    b.store.failNext(storeDown(), MAX_COPY_RETRIES_PER_ATTEMPT + 1);
    await processJob(worker, jobId, receipt());
    expect(plannedOf(await job(b, jobId))).toBe(120_000);
  });

  it('starts the first download as soon as the service answers, before any write of the job', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    const update = b.jobs.updateJob.bind(b.jobs);
    const downloadsAtWrite: number[] = [];
    b.jobs.updateJob = async (current, changes) => {
      downloadsAtWrite.push(b.service.downloads.length);
      return update(current, changes);
    };
    expect((await processJob(b.worker, jobId, receipt())).kind).toBe('stored');
    expect(downloadsAtWrite).toEqual([1]);
    expect(b.service.downloads).toHaveLength(1);
  });

  it('takes an early body that broke off before the copy took it as a failed download, and downloads again', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    const download = b.service.download.bind(b.service);
    let first = true;
    b.service.download = async (url, options) => {
      const opened = await download(url, options);
      if (!first) return opened;
      first = false;
      const cut = new PassThrough();
      setImmediate(() => cut.destroy(new DocgenDownloadCutError('download: cut')));
      return { ...opened, body: cut };
    };
    // The body breaks off while the worker reads the link lifetime estimate, between the answer and the copy.
    const estimates = new InMemoryServiceEstimates();
    const linkAges = estimates.linkAges.bind(estimates);
    estimates.linkAges = async (service) => {
      await new Promise((resolve) => setImmediate(resolve));
      return linkAges(service);
    };
    expect((await processJob({ ...b.worker, estimates }, jobId, receipt())).kind).toBe('stored');
    expect(b.service.downloads).toHaveLength(2);
    expect(b.service.created).toHaveLength(1);
    expect(b.log.lines.some((l) => l.message === 'copy failed; downloading again')).toBe(true);
  });

  it('drops a document whose links were refused before giving up the attempt, so the next one does not try them', async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.service.failDownload('expire', 'expire', 'expire');
    expect(await processJob(b.worker, jobId, receipt())).toMatchObject({ error: { code: 'LINKS_EXPIRING' } });
    expect(await job(b, jobId)).toMatchObject({ status: 'queued' });
    const downloads = b.service.downloads.length;
    expect((await processJob(b.worker, jobId, receipt('m-1', 2))).kind).toBe('stored');
    expect(b.service.downloads.length - downloads).toBe(1);
  });

  it("gives a retried attempt's service calls a short budget, so it waits in the queue rather than in a lane", async () => {
    const b = memoryBench();
    const jobId = await oneJob(b);
    b.store.failNext(storeDown(), MAX_COPY_RETRIES_PER_ATTEMPT + 1);
    expect((await processJob(b.worker, jobId, receipt())).kind).toBe('retry');
    expect(b.service.created.map((r) => r.retryBudgetMs)).toEqual([undefined]);
    expect(b.service.downloadBudgets).toEqual([undefined, undefined, undefined]);
    b.service.expireLinks();
    expect((await processJob(b.worker, jobId, receipt('m-1', 2))).kind).toBe('stored');
    expect(b.service.created.map((r) => r.retryBudgetMs)).toEqual([
      undefined,
      RETRY_ATTEMPT_SERVICE_BUDGET_MS,
    ]);
    expect(b.service.downloadBudgets.slice(3)).toEqual([
      RETRY_ATTEMPT_SERVICE_BUDGET_MS,
      RETRY_ATTEMPT_SERVICE_BUDGET_MS,
    ]);
  });

  it('backs off briefly after links kept being refused, whatever the attempts so far', () => {
    for (const attempts of [1, 4, 8]) {
      const decision = decideRetry({
        error: new LinksExpiringError(),
        receiveCount: attempts,
        maxReceiveCount: 10,
        attempts,
        receivedAtMs: 0,
        nowMs: 1_000,
        outageBudgetMs: 86_400_000,
        canRequeue: true,
        retryBaseSeconds: 60,
        random: 0.99,
      });
      expect(decision).toMatchObject({ kind: 'retry', delaySeconds: LINKS_EXPIRING_MAX_DELAY_SECONDS });
    }
  });
});
