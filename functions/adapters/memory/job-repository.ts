/**
 * The job repository in memory: the same contract as the DynamoDB adapter (conditional writes, versions,
 * the open index, leases), for unit tests of the core and benchmarks. Faults are injected per operation.
 */
import { JobConflictError } from '../../core/errors';
import {
  applyChanges,
  type DeliveryRecord,
  heldByAnother,
  holdsEveryPlannedJob,
  isFinal,
  type JobChanges,
  type JobRecord,
  transitions,
  awaitsFirstPickup as untouched,
  withoutCloser,
} from '../../core/job';
import { ENQUEUE_GRACE_MS } from '../../core/outbox';
import {
  type CreateDeliveryResult,
  type EnsuredJobs,
  type JobClaim,
  type JobListPage,
  type JobListQuery,
  type JobRepository,
  listCursor,
  listLimit,
  listSortKey,
  matchesListQuery,
  type StrandedItems,
  stringFieldCursor,
} from '../../ports/job-repository';

/** The repository's operations, for fault injection. */
export type RepositoryOperation = keyof JobRepository;

interface StoredDelivery {
  record: DeliveryRecord;
  /** In the open index: recorded without all its jobs, or its send failed. */
  open: boolean;
  /** Epoch ms by which its messages should all have been sent. */
  leaseUntil: number;
}

const clone = <T>(value: T): T => structuredClone(value);

/** Deliveries and jobs in maps. */
export class InMemoryJobRepository implements JobRepository {
  readonly deliveries = new Map<string, StoredDelivery>();
  readonly jobs = new Map<string, JobRecord>();
  readonly contents = new Map<string, string>();
  /** Every write made, in order (operation and key), for assertions. */
  readonly writes: Array<{ operation: RepositoryOperation; key: string }> = [];
  private readonly faults: Array<{ operation: RepositoryOperation; error: unknown; times: number }> = [];

  constructor(private readonly options: { now?: () => number; enqueueGraceMs?: number } = {}) {}

  /** Makes the next `times` calls of `operation` throw `error`. */
  failNext(operation: RepositoryOperation, error: unknown, times = 1): void {
    this.faults.push({ operation, error, times });
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private fault(operation: RepositoryOperation): void {
    const fault = this.faults.find((f) => f.operation === operation && f.times > 0);
    if (fault === undefined) return;
    fault.times -= 1;
    throw fault.error;
  }

  async createDelivery(
    delivery: DeliveryRecord,
    jobs: readonly JobRecord[],
    contentKey?: string,
  ): Promise<CreateDeliveryResult> {
    this.fault('createDelivery');
    const content = contentKey === undefined ? undefined : `${delivery.integration}#${contentKey}`;
    const holder = content === undefined ? undefined : this.contents.get(content);
    if (holder !== undefined && holder !== delivery.deliveryId)
      return { created: false, duplicateOf: holder };
    const key = `${delivery.integration}#${delivery.deliveryId}`;
    const existing = this.deliveries.get(key);
    if (existing !== undefined)
      return { created: false, duplicateOf: delivery.deliveryId, existing: clone(existing.record) };
    // All at once here (DynamoDB writes them in turn), closed when it holds every planned job.
    const atOnce = holdsEveryPlannedJob(delivery, jobs);
    if (content !== undefined) this.contents.set(content, delivery.deliveryId);
    this.deliveries.set(key, { record: clone(delivery), open: !atOnce, leaseUntil: this.graceEnd() });
    for (const job of jobs) this.jobs.set(job.jobId, clone(atOnce ? withoutCloser(job) : job));
    this.writes.push({ operation: 'createDelivery', key });
    return { created: true };
  }

  async ensureJobs(jobs: readonly JobRecord[]): Promise<EnsuredJobs> {
    this.fault('ensureJobs');
    const ensured: EnsuredJobs = { created: [], untouched: [] };
    for (const job of jobs) {
      const existing = this.jobs.get(job.jobId);
      if (existing !== undefined) {
        if (untouched(existing)) ensured.untouched.push(job.jobId);
        continue;
      }
      this.jobs.set(job.jobId, clone(job));
      this.writes.push({ operation: 'ensureJobs', key: job.jobId });
      ensured.created.push(job.jobId);
    }
    return ensured;
  }

  async getDelivery(integration: string, deliveryId: string): Promise<DeliveryRecord | undefined> {
    this.fault('getDelivery');
    const found = this.deliveries.get(`${integration}#${deliveryId}`);
    return found === undefined ? undefined : clone(found.record);
  }

  async markDeliverySendFailed(integration: string, deliveryId: string, at: string): Promise<void> {
    this.setOnDelivery('markDeliverySendFailed', integration, deliveryId, { sendFailedAt: at }, true);
  }

  private graceEnd(): number {
    return this.now() + (this.options.enqueueGraceMs ?? ENQUEUE_GRACE_MS);
  }

  async markDeliveryEnqueued(integration: string, deliveryId: string, at: string): Promise<void> {
    this.setOnDelivery('markDeliveryEnqueued', integration, deliveryId, { enqueuedAt: at }, false);
  }

  async closeDelivery(
    integration: string,
    deliveryId: string,
    at: string,
  ): Promise<DeliveryRecord | undefined> {
    this.fault('closeDelivery');
    const found = this.deliveries.get(`${integration}#${deliveryId}`);
    if (found === undefined || !found.open || found.record.sendFailedAt !== undefined) return undefined;
    this.setOnDelivery('closeDelivery', integration, deliveryId, { enqueuedAt: at }, false);
    return clone(found.record);
  }

  private setOnDelivery(
    operation: RepositoryOperation,
    integration: string,
    deliveryId: string,
    changes: Partial<DeliveryRecord>,
    open: boolean,
  ): void {
    this.fault(operation);
    const key = `${integration}#${deliveryId}`;
    const found = this.deliveries.get(key);
    if (found === undefined) throw new Error(`no delivery ${key}`);
    // Opening again (a failed send) is refused once enqueued, as the table's condition does.
    if (open && found.record.enqueuedAt !== undefined) throw new Error(`delivery ${key} is enqueued already`);
    Object.assign(found.record, changes);
    Object.assign(found, open ? { open, leaseUntil: this.graceEnd() } : { open });
    this.writes.push({ operation, key });
  }

  async getJob(jobId: string): Promise<JobRecord | undefined> {
    this.fault('getJob');
    const job = this.jobs.get(jobId);
    return job === undefined ? undefined : clone(job);
  }

  async updateJob(job: JobRecord, changes: JobChanges): Promise<JobRecord> {
    this.fault('updateJob');
    const current = this.jobs.get(job.jobId);
    if (current === undefined || current.version !== job.version) throw new JobConflictError(job.jobId);
    const at = new Date(this.now()).toISOString();
    // As DynamoDB's update: only the changes are written, so a lease renewed since `job` was read stays.
    this.jobs.set(job.jobId, clone(applyChanges(current, changes, at)));
    this.writes.push({ operation: 'updateJob', key: job.jobId });
    return applyChanges(job, changes, at);
  }

  async claimJob(claim: JobClaim): Promise<JobRecord | undefined> {
    this.fault('claimJob');
    const job = this.jobs.get(claim.jobId);
    if (job === undefined || (job.status !== 'queued' && job.status !== 'processing')) return undefined;
    if (job.attempts >= claim.maxAttempts || heldByAnother(job, claim.owner, claim.nowMs)) return undefined;
    const keep = claim.keepLeaseWithin;
    const lease = job.leaseUntil ?? Number.NaN;
    const kept = keep !== undefined && lease >= keep.from && lease <= keep.to;
    const changes = transitions.claim(job, claim.owner, kept ? lease : claim.leaseUntil);
    const next = applyChanges(job, changes, new Date(this.now()).toISOString());
    this.jobs.set(job.jobId, clone(next));
    this.writes.push({ operation: 'claimJob', key: job.jobId });
    return clone(next);
  }

  async renewLease(jobId: string, owner: string, until: number): Promise<boolean> {
    this.fault('renewLease');
    const job = this.jobs.get(jobId);
    if (job === undefined || isFinal(job.status) || job.leaseOwner !== owner) return false;
    job.leaseUntil = until;
    return true;
  }

  async listStranded(before: number, limit = 100): Promise<StrandedItems> {
    this.fault('listStranded');
    const open = [
      ...[...this.deliveries.values()]
        .filter((d) => d.open && d.leaseUntil < before)
        .map((d) => ({ at: d.leaseUntil, delivery: d.record })),
      ...[...this.jobs.values()]
        .filter((job) => !isFinal(job.status) && (job.leaseUntil ?? 0) < before)
        .map((job) => ({ at: job.leaseUntil ?? 0, job })),
    ]
      .sort((a, b) => a.at - b.at)
      .slice(0, limit);
    return {
      deliveries: open.flatMap((item) => ('delivery' in item ? [clone(item.delivery)] : [])),
      jobs: open.flatMap((item) => ('job' in item ? [clone(item.job)] : [])),
    };
  }

  async listJobs(query: JobListQuery): Promise<JobListPage> {
    this.fault('listJobs');
    const limit = listLimit(query);
    const after =
      query.cursor === undefined ? undefined : listCursor.decode(query.cursor, stringFieldCursor('k'));
    const matching = [...this.jobs.values()]
      .filter((job) => matchesListQuery(job, query) && (after === undefined || listSortKey(job) < after))
      .sort((a, b) => (listSortKey(a) < listSortKey(b) ? 1 : -1));
    const page = matching.slice(0, limit);
    const last = page.at(-1);
    return {
      jobs: page.map(clone),
      ...(matching.length > limit && last !== undefined
        ? { cursor: listCursor.encode({ k: listSortKey(last) }) }
        : {}),
    };
  }

  async findDeliveries(deliveryId: string): Promise<DeliveryRecord[]> {
    this.fault('findDeliveries');
    return [...this.deliveries.values()]
      .map((open) => open.record)
      .filter((record) => record.deliveryId === deliveryId)
      .sort((a, b) => (a.receivedAt < b.receivedAt ? 1 : -1))
      .map(clone);
  }
}
