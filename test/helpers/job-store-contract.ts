/**
 * One contract for the job store (functions/ports/job-repository.ts), run against every implementation: the
 * in-memory repository the core's unit tests rest on, the DynamoDB adapter over the unit tests' fake client,
 * and the adapter over real DynamoDB emulators (dynalite, moto). Each runner supplies a fresh store per test.
 */
import { JobConflictError } from '../../functions/core/errors';
import {
  type DeliveryRecord,
  type JobRecord,
  newJobRecords,
  transitions,
  withoutCloser,
} from '../../functions/core/job';
import {
  InvalidCursorError,
  type JobListQuery,
  type JobRepository,
} from '../../functions/ports/job-repository';

/** The contract's fixed now: late in a UTC day, so listings span days. */
export const CONTRACT_NOW = Date.parse('2026-03-10T12:00:00.000Z');
const GRACE_MS = 60_000;
/** The retention the stores are made with. */
export const CONTRACT_RETENTION_DAYS = 5;
const HOUR = 3_600_000;

/** A store under test, on a clock the test moves. */
export interface ContractStore {
  readonly repository: JobRepository;
  readonly advance: (ms: number) => void;
}

/**
 * Makes a fresh, empty store whose clock reads `now()`, with a 60 s enqueue grace and CONTRACT_RETENTION_DAYS
 * of retention (the contract's jobs are at most four days old; a shorter retention keeps listings' walks short).
 */
export type MakeStore = (clock: { now: () => number }) => Promise<ContractStore>;

const at = (ms: number): string => new Date(ms).toISOString();

/** A delivery of `jobCount` jobs received at `receivedMs`. */
export function contractDelivery(
  deliveryId: string,
  receivedMs: number,
  jobCount = 1,
  integration = 'notes',
): { delivery: DeliveryRecord; jobs: JobRecord[] } {
  const delivery: DeliveryRecord = {
    integration,
    deliveryId,
    receivedAt: at(receivedMs),
    jobs: Array.from({ length: jobCount }, (_, i) => ({
      jobId: `${integration}-${deliveryId}-${i}`,
      rule: 'invoice',
      templateId: '9001',
    })),
    sealedPayload: `sealed-${deliveryId}`,
  };
  return { delivery, jobs: newJobRecords(delivery, receivedMs) };
}

/** Every page of a listing, followed through its cursors (bounded). */
async function listAll(repository: JobRepository, query: JobListQuery): Promise<JobRecord[][]> {
  const pages: JobRecord[][] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i += 1) {
    const page = await repository.listJobs({ ...query, ...(cursor === undefined ? {} : { cursor }) });
    pages.push(page.jobs);
    cursor = page.cursor;
    if (cursor === undefined) return pages;
  }
  throw new Error('listing did not end within 100 pages');
}

/** Declares the contract's tests for one implementation. */
export function describeJobStoreContract(name: string, make: MakeStore): void {
  describe(`job store contract: ${name}`, () => {
    async function store(): Promise<ContractStore & { nowMs: () => number }> {
      let now = CONTRACT_NOW;
      const made = await make({ now: () => now });
      return {
        ...made,
        nowMs: () => now,
        advance: (ms) => {
          now += ms;
          made.advance(ms);
        },
      };
    }

    it('records a delivery with its jobs once; a duplicate writes nothing and returns the record', async () => {
      const { repository } = await store();
      const { delivery, jobs } = contractDelivery('d-1', CONTRACT_NOW, 2);
      await expect(repository.createDelivery(delivery, jobs)).resolves.toEqual({ created: true });
      await expect(repository.getDelivery('notes', 'd-1')).resolves.toEqual(delivery);
      await expect(repository.getJob(jobs[0]?.jobId as string)).resolves.toEqual(jobs[0]);
      const again = contractDelivery('d-1', CONTRACT_NOW + 1, 3);
      await expect(repository.createDelivery(again.delivery, again.jobs)).resolves.toEqual({
        created: false,
        duplicateOf: 'd-1',
        existing: delivery,
      });
      await expect(repository.getJob(again.jobs[2]?.jobId as string)).resolves.toBeUndefined();
      await expect(repository.getDelivery('other', 'd-1')).resolves.toBeUndefined();
    });

    it('answers the same content under another id as a duplicate of its holder; a retry of the holder is itself', async () => {
      const { repository } = await store();
      const first = contractDelivery('d-1', CONTRACT_NOW);
      const second = contractDelivery('d-2', CONTRACT_NOW);
      await expect(repository.createDelivery(first.delivery, first.jobs, 'sha-1')).resolves.toEqual({
        created: true,
      });
      await expect(repository.createDelivery(second.delivery, second.jobs, 'sha-1')).resolves.toMatchObject({
        created: false,
        duplicateOf: 'd-1',
      });
      await expect(repository.getDelivery('notes', 'd-2')).resolves.toBeUndefined();
      await expect(repository.createDelivery(first.delivery, first.jobs, 'sha-1')).resolves.toMatchObject({
        created: false,
        duplicateOf: 'd-1',
      });
      const other = contractDelivery('d-3', CONTRACT_NOW, 1, 'billing');
      await expect(repository.createDelivery(other.delivery, other.jobs, 'sha-1')).resolves.toEqual({
        created: true,
      });
    });

    it('makes one set of jobs from two concurrent recordings of one delivery', async () => {
      const { repository } = await store();
      const { delivery, jobs } = contractDelivery('d-1', CONTRACT_NOW, 2);
      const results = await Promise.allSettled([
        repository.createDelivery(delivery, jobs),
        repository.createDelivery(delivery, jobs),
      ]);
      const created = results.filter((r) => r.status === 'fulfilled' && r.value.created);
      expect(created).toHaveLength(1);
      for (const result of results) {
        if (result.status === 'rejected') expect(result.reason).toMatchObject({ retryable: true });
      }
      await expect(repository.getDelivery('notes', 'd-1')).resolves.toEqual(delivery);
    });

    it('writes only missing jobs and says which existing ones still wait for their first pickup', async () => {
      const { repository } = await store();
      const { delivery, jobs } = contractDelivery('d-1', CONTRACT_NOW, 3);
      const [a, b, c] = jobs as [JobRecord, JobRecord, JobRecord];
      await repository.createDelivery(delivery, [a, b]);
      await repository.claimJob({
        jobId: b.jobId,
        owner: 'm',
        leaseUntil: CONTRACT_NOW + HOUR,
        nowMs: CONTRACT_NOW,
        maxAttempts: 3,
      });
      const ensured = await repository.ensureJobs([a, b, c]);
      expect(ensured).toEqual({ created: [c.jobId], untouched: [a.jobId] });
      await expect(repository.getJob(b.jobId)).resolves.toMatchObject({ status: 'processing', attempts: 1 });
    });

    it('claims in one write: free or own or run-out leases, attempts left, open statuses only', async () => {
      const { repository } = await store();
      const { delivery, jobs } = contractDelivery('d-1', CONTRACT_NOW);
      const job = jobs[0] as JobRecord;
      await repository.createDelivery(delivery, jobs);
      const claim = {
        jobId: job.jobId,
        owner: 'm-1',
        leaseUntil: CONTRACT_NOW + 60_000,
        nowMs: CONTRACT_NOW,
        maxAttempts: 2,
      };
      const claimed = await repository.claimJob(claim);
      expect(claimed).toEqual({
        ...withoutCloser(job),
        ...transitions.claim(job, 'm-1', CONTRACT_NOW + 60_000),
        version: 1,
        updatedAt: at(CONTRACT_NOW),
      });
      await expect(repository.claimJob({ ...claim, owner: 'm-2' })).resolves.toBeUndefined();
      await expect(
        repository.claimJob({ ...claim, owner: 'm-2', nowMs: CONTRACT_NOW + 60_000 }),
      ).resolves.toMatchObject({
        leaseOwner: 'm-2',
        attempts: 2,
      });
      await expect(
        repository.claimJob({ ...claim, owner: 'm-2', nowMs: CONTRACT_NOW + 60_000 }),
      ).resolves.toBeUndefined();
      await expect(repository.claimJob({ ...claim, jobId: 'missing' })).resolves.toBeUndefined();
      await expect(repository.getJob(job.jobId)).resolves.toMatchObject({ attempts: 2, version: 2 });
    });

    it('keeps a lease within the range the claim gives, and sets its own outside it', async () => {
      const { repository } = await store();
      const { delivery, jobs } = contractDelivery('d-1', CONTRACT_NOW, 3);
      await repository.createDelivery(delivery, jobs);
      // New jobs carry their first-pickup lease (FIRST_PICKUP_MS from receipt).
      const firstPickup = (jobs[0] as JobRecord).leaseUntil as number;
      const claim = (jobId: string, from: number, to: number) =>
        repository.claimJob({
          jobId,
          owner: `m-${jobId}`,
          leaseUntil: CONTRACT_NOW + 1_800_000,
          nowMs: CONTRACT_NOW,
          maxAttempts: 5,
          keepLeaseWithin: { from, to },
        });
      const [kept, early, late] = jobs.map((job) => job.jobId) as [string, string, string];
      await expect(claim(kept, firstPickup - 1, firstPickup + 1)).resolves.toMatchObject({
        leaseUntil: firstPickup,
        leaseOwner: `m-${kept}`,
        attempts: 1,
        status: 'processing',
      });
      await expect(claim(early, firstPickup + 1, firstPickup + 2)).resolves.toMatchObject({
        leaseUntil: CONTRACT_NOW + 1_800_000,
        attempts: 1,
      });
      await expect(claim(late, firstPickup - 2, firstPickup - 1)).resolves.toMatchObject({
        leaseUntil: CONTRACT_NOW + 1_800_000,
      });
      // Held by another: refused whatever the lease (a kept lease is still a held one).
      await expect(
        repository.claimJob({
          jobId: kept,
          owner: 'm-other',
          leaseUntil: CONTRACT_NOW + 1_800_000,
          nowMs: CONTRACT_NOW,
          maxAttempts: 5,
          keepLeaseWithin: { from: firstPickup - 1, to: firstPickup + 1 },
        }),
      ).resolves.toBeUndefined();
      await expect(repository.getJob(kept)).resolves.toMatchObject({ version: 1, attempts: 1 });
    });

    it("updates compare-and-swap on the version read, and renews only the holder's lease", async () => {
      const { repository, advance } = await store();
      const { delivery, jobs } = contractDelivery('d-1', CONTRACT_NOW);
      await repository.createDelivery(delivery, jobs);
      const job = jobs[0] as JobRecord;
      const claimed = (await repository.claimJob({
        jobId: job.jobId,
        owner: 'm-1',
        leaseUntil: CONTRACT_NOW + 60_000,
        nowMs: CONTRACT_NOW,
        maxAttempts: 3,
      })) as JobRecord;
      await expect(repository.updateJob(job, { status: 'queued' })).rejects.toBeInstanceOf(JobConflictError);
      await expect(repository.renewLease(job.jobId, 'm-1', CONTRACT_NOW + 120_000)).resolves.toBe(true);
      await expect(repository.renewLease(job.jobId, 'm-2', CONTRACT_NOW + 180_000)).resolves.toBe(false);
      const renewed = (await repository.getJob(job.jobId)) as JobRecord;
      expect(renewed).toMatchObject({ leaseUntil: CONTRACT_NOW + 120_000, version: claimed.version });
      advance(1_000);
      const failed = await repository.updateJob(
        renewed,
        transitions.fail(renewed, { code: 'X', message: 'x' }),
      );
      expect(failed).toMatchObject({
        status: 'failed',
        version: claimed.version + 1,
        updatedAt: at(CONTRACT_NOW + 1_000),
      });
      await expect(repository.getJob(job.jobId)).resolves.toEqual(failed);
      await expect(repository.renewLease(job.jobId, 'm-1', CONTRACT_NOW + 240_000)).resolves.toBe(false);
      await expect(repository.updateJob(renewed, {})).rejects.toBeInstanceOf(JobConflictError);
    });

    it('keeps a lease the heartbeat renewed when the holder writes a checkpoint from the record it claimed', async () => {
      const { repository } = await store();
      const { delivery, jobs } = contractDelivery('d-1', CONTRACT_NOW);
      await repository.createDelivery(delivery, jobs);
      const claimed = (await repository.claimJob({
        jobId: (jobs[0] as JobRecord).jobId,
        owner: 'm-1',
        leaseUntil: CONTRACT_NOW + 60_000,
        nowMs: CONTRACT_NOW,
        maxAttempts: 3,
      })) as JobRecord;
      await expect(repository.renewLease(claimed.jobId, 'm-1', CONTRACT_NOW + 120_000)).resolves.toBe(true);
      const document = {
        id: 'doc-1',
        name: 'Doc',
        templateId: 't',
        createdAt: at(CONTRACT_NOW),
        linksExpireAt: at(CONTRACT_NOW),
      };
      await repository.updateJob(claimed, transitions.created(claimed, document, []));
      await expect(repository.getJob(claimed.jobId)).resolves.toMatchObject({
        status: 'created',
        leaseUntil: CONTRACT_NOW + 120_000,
        leaseOwner: 'm-1',
      });
    });

    it('keeps the outbox: a delivery recorded with all its jobs is closed; one without closes once on its first pickup', async () => {
      const { repository } = await store();
      const one = contractDelivery('d-1', CONTRACT_NOW);
      const two = contractDelivery('d-2', CONTRACT_NOW);
      await repository.createDelivery(one.delivery, []);
      await repository.createDelivery(two.delivery, two.jobs);
      // Recorded with every job: born closed, and no job of it is left to close it.
      await expect(repository.getJob(`notes-d-2-0`)).resolves.not.toHaveProperty('closesDelivery');
      await expect(repository.closeDelivery('notes', 'd-2', at(CONTRACT_NOW))).resolves.toBeUndefined();
      await expect(repository.closeDelivery('notes', 'd-1', at(CONTRACT_NOW))).resolves.toEqual({
        ...one.delivery,
        enqueuedAt: at(CONTRACT_NOW),
      });
      await expect(repository.closeDelivery('notes', 'd-1', at(CONTRACT_NOW))).resolves.toBeUndefined();
      await expect(repository.getDelivery('notes', 'd-1')).resolves.toEqual({
        ...one.delivery,
        enqueuedAt: at(CONTRACT_NOW),
      });
      await repository.markDeliverySendFailed('notes', 'd-2', at(CONTRACT_NOW));
      await expect(repository.closeDelivery('notes', 'd-2', at(CONTRACT_NOW))).resolves.toBeUndefined();
      await expect(repository.getDelivery('notes', 'd-2')).resolves.toEqual({
        ...two.delivery,
        sendFailedAt: at(CONTRACT_NOW),
      });
      await expect(repository.closeDelivery('notes', 'missing', at(CONTRACT_NOW))).resolves.toBeUndefined();
      await expect(repository.markDeliveryEnqueued('notes', 'missing', at(CONTRACT_NOW))).rejects.toThrow();
      // A failed send opens a closed delivery for its grace: the reconciler completes it if nobody retries.
      await expect(repository.listStranded(CONTRACT_NOW + GRACE_MS + 1)).resolves.toMatchObject({
        deliveries: [{ deliveryId: 'd-2' }],
      });
      // Once enqueued it is not opened again.
      await repository.markDeliveryEnqueued('notes', 'd-2', at(CONTRACT_NOW));
      await expect(repository.markDeliverySendFailed('notes', 'd-2', at(CONTRACT_NOW))).rejects.toThrow();
      await expect(repository.listStranded(CONTRACT_NOW + GRACE_MS + 1)).resolves.toMatchObject({
        deliveries: [],
      });
    });

    it('lists stranded deliveries after their grace and open jobs whose lease ran out, never final or closed ones', async () => {
      const { repository, advance } = await store();
      const sent = contractDelivery('d-sent', CONTRACT_NOW);
      const stuck = contractDelivery('d-stuck', CONTRACT_NOW, 2);
      const [done, waiting] = stuck.jobs as [JobRecord, JobRecord];
      await repository.createDelivery(sent.delivery, sent.jobs);
      // Recorded without its second job (as in steps, cut short): open until completed.
      await repository.createDelivery(stuck.delivery, [done]);
      await repository.ensureJobs([waiting]);
      await repository.markDeliveryEnqueued('notes', 'd-sent', at(CONTRACT_NOW));
      await repository.updateJob(done, transitions.fail(done, { code: 'X', message: 'x' }));
      await expect(repository.listStranded(CONTRACT_NOW + GRACE_MS - 1)).resolves.toEqual({
        deliveries: [],
        jobs: [],
      });
      advance(GRACE_MS);
      const stranded = await repository.listStranded(CONTRACT_NOW + 16 * 60_000);
      expect(stranded.deliveries).toEqual([stuck.delivery]);
      expect(stranded.jobs.map((j) => j.jobId).sort()).toEqual([sent.jobs[0]?.jobId, waiting.jobId].sort());
      const limited = await repository.listStranded(Number.MAX_SAFE_INTEGER, 2);
      expect(limited.deliveries.length + limited.jobs.length).toBe(2);
    });

    /** Ten one-job deliveries over four days, newest first; every third of integration `billing`. */
    async function tenJobs(repository: JobRepository): Promise<JobRecord[]> {
      const hoursAgo = [0, 1, 2, 5, 26, 27, 49, 50, 51, 75];
      const all: JobRecord[] = [];
      for (const [i, hours] of hoursAgo.entries()) {
        const made = contractDelivery(
          `d-${i}`,
          CONTRACT_NOW - hours * HOUR,
          1,
          i % 3 === 0 ? 'billing' : 'notes',
        );
        await repository.createDelivery(made.delivery, made.jobs);
        all.push(...made.jobs);
      }
      return all;
    }
    const ids = (pages: JobRecord[][]): string[] => pages.flat().map((job) => job.jobId);

    it('lists jobs newest first across days, each once through the cursors, whatever the page size', async () => {
      const { repository } = await store();
      const newestFirst = (await tenJobs(repository)).map((job) => job.jobId);
      for (const limit of [1, 4, 50]) {
        const pages = await listAll(repository, { limit });
        expect(ids(pages)).toEqual(newestFirst);
        expect(pages.every((page) => page.length <= limit)).toBe(true);
      }
      await expect(repository.listJobs({ cursor: 'not-a-cursor' })).rejects.toBeInstanceOf(
        InvalidCursorError,
      );
    });

    it('lists jobs narrowed by integration, status, time of receipt and delivery id', async () => {
      const { repository } = await store();
      const all = await tenJobs(repository);
      const newestFirst = all.map((job) => job.jobId);
      const failing = all[4] as JobRecord;
      await repository.updateJob(failing, transitions.fail(failing, { code: 'X', message: 'x' }));
      expect(ids(await listAll(repository, { integration: 'billing', limit: 2 }))).toEqual(
        newestFirst.filter((id) => id.startsWith('billing-')),
      );
      expect(ids(await listAll(repository, { status: 'failed', limit: 2 }))).toEqual([failing.jobId]);
      const since = at(CONTRACT_NOW - 27 * HOUR);
      expect(ids(await listAll(repository, { since, limit: 4 }))).toEqual(newestFirst.slice(0, 6));
      expect(ids(await listAll(repository, { deliveryId: 'd-6' }))).toEqual([all[6]?.jobId]);
    });

    it("finds a delivery id across integrations, newest first, and pages a delivery's jobs", async () => {
      const { repository } = await store();
      const older = contractDelivery('d-1', CONTRACT_NOW - HOUR, 3, 'billing');
      const newer = contractDelivery('d-1', CONTRACT_NOW, 1, 'notes');
      await repository.createDelivery(older.delivery, older.jobs, 'sha-x');
      await repository.createDelivery(newer.delivery, newer.jobs);
      await expect(repository.findDeliveries('d-1')).resolves.toEqual([newer.delivery, older.delivery]);
      await expect(repository.findDeliveries('d-2')).resolves.toEqual([]);
      const pages = await listAll(repository, { deliveryId: 'd-1', limit: 2 });
      expect(pages.map((page) => page.length)).toEqual([2, 2]);
      expect(
        pages
          .flat()
          .map((job) => job.jobId)
          .sort(),
      ).toEqual([...older.jobs, ...newer.jobs].map((j) => j.jobId).sort());
      expect(pages.flat().map((job) => job.jobId)).toEqual(
        [...newer.jobs, ...older.jobs.slice().reverse()].map((j) => j.jobId),
      );
    });
  });
}
