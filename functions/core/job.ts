/**
 * A job: one document to generate for one matched rule of one delivery, and its state machine. Every change
 * of a job's state is one of the transitions below (pure functions from a record to its changes); the
 * repository writes them conditionally on the version read.
 *
 *   queued ──claim──▶ processing ──created──▶ created ──fileStored…──▶ created ──stored──▶ stored
 *      ▲                  │   ▲                  │
 *      │                  │   └──linksExpired────┤
 *      └──release─────────┴──────────────────────┘ (back to queued, or to created keeping the checkpoint)
 *   any open state ──fail──▶ failed          stored | failed ──replay──▶ queued | created
 *
 * `created` is the checkpoint: the document's id and files are recorded (the download links only sealed, see
 * commons/seal.ts), so a retry copies the files instead of generating a second document while its links live.
 */
import { InvalidTransitionError } from './errors';

/** Where a job is in its life. `stored` and `failed` are final. */
export type JobStatus = 'queued' | 'processing' | 'created' | 'stored' | 'failed';

/** The job statuses that are final. */
export const finalStatuses: ReadonlySet<JobStatus> = new Set(['stored', 'failed']);

/** A generated file as the job records it: the service's description, and where it landed in S3. */
export interface JobFile {
  fileId: string;
  filename: string;
  mimeType: string;
  /** Size the service gave (its unit is not documented; bytes in every answer seen); absent when it gave none. */
  size?: number;
  bucket?: string;
  key?: string;
  /** SHA-256 (hex) of the bytes stored, computed while streaming. */
  sha256?: string;
  /** Bytes stored. */
  storedSize?: number;
  storedAt?: string;
}

/** The document the service generated for a job (the checkpoint). */
export interface JobDocument {
  id: string;
  name: string;
  templateId: string;
  templateFileId?: string;
  createdAt: string;
  /** When the service's download links are expected to expire. */
  linksExpireAt: string;
  /** The download links, encrypted (they carry tokens, which never rest in clear). Removed once stored. */
  sealedLinks?: string;
}

/** Why a job failed, or why its last attempt did. Never holds a secret. */
export interface JobError {
  code: string;
  message: string;
}

/** One attempt that ended without finishing the job: which, when, and why. */
export interface AttemptError extends JobError {
  attempt: number;
  at: string;
}

/** How many attempts' errors a job keeps (the most recent). */
export const MAX_ATTEMPT_ERRORS = 10;

/** The job record kept in the table. */
export interface JobRecord {
  jobId: string;
  integration: string;
  rule: string;
  deliveryId: string;
  status: JobStatus;
  /** Attempts started (claims). */
  attempts: number;
  /**
   * Attempts that ended waiting out a service outage (429, 5xx, timeouts): they do not count against
   * `jobs.maxAttempts`, the outage budget bounds them instead.
   */
  outageRetries?: number;
  /** Documents requested from the service for this job (1 unless links expired or a replay was fresh). */
  documentsRequested: number;
  receivedAt: string;
  createdAt: string;
  updatedAt: string;
  templateId: string;
  templateFileId?: string;
  document?: JobDocument;
  files: JobFile[];
  /** Set when the job failed. */
  error?: JobError;
  /** The last retryable error, kept while the job is retried. */
  lastError?: JobError;
  /** The errors of the attempts that ended without finishing the job, oldest first (the last few). */
  attemptErrors?: AttemptError[];
  /** Who holds the job (one message receipt) and until when (epoch ms). */
  leaseOwner?: string;
  /** Epoch ms until which an open job is expected to progress; the reconciler re-enqueues it after. */
  leaseUntil?: number;
  /**
   * The message whose attempt made the job final (stored or failed). If that message comes back, its worker
   * may have died before the job's event went out, or the event failed: the event is published again.
   */
  settledBy?: string;
  /**
   * Files no record will keep: those of the document a fresh replay dropped (`replay --fresh`), and a file
   * about to land before its document is checkpointed (job-checkpoint.ts). Once the job is stored, the worker
   * removes those its files did not overwrite, however many runs that takes.
   */
  replacedFiles?: Array<{ bucket: string; key: string }>;
  /**
   * Set on the delivery's last planned job, the last one its ingest sends: that job's first pickup proves
   * every message of the delivery went out, so it closes the delivery (core/outbox.ts).
   */
  closesDelivery?: boolean;
  /** Optimistic concurrency: every write checks and bumps it. */
  version: number;
}

/** A delivery: one accepted webhook or event, and the jobs it made. Its key is the dedupe key. */
export interface DeliveryRecord {
  integration: string;
  deliveryId: string;
  receivedAt: string;
  /** The jobs it made: enough to write any missing job record again (the delivery is the outbox). */
  jobs: PlannedJob[];
  /** Set once the reconciler completed its outbox (after its grace): a duplicate before then may send again. */
  enqueuedAt?: string;
  /** Set by an ingest that answered 5xx after writing it (jobs not all written or sent): its retry sends them. */
  sendFailedAt?: string;
  /** The payload, sealed (payload.ts): kept so any job of the delivery can be sent again or replayed. */
  sealedPayload: string;
}

/**
 * True for a job no worker has claimed and nobody has sent again yet (the reconciler's resend bumps the
 * version): its message may still be missing, so completing its delivery's outbox sends it.
 */
export const awaitsFirstPickup = (job: Pick<JobRecord, 'status' | 'version'>): boolean =>
  job.status === 'queued' && job.version === 0;

/** True while a lease owner other than `owner` holds the job (its lease runs past `nowMs`). */
export const heldByAnother = (
  job: Pick<JobRecord, 'leaseOwner' | 'leaseUntil'>,
  owner: string,
  nowMs: number,
): boolean => job.leaseOwner !== undefined && job.leaseOwner !== owner && (job.leaseUntil ?? 0) > nowMs;

/** True when no more work will happen on a job by itself. */
export const isFinal = (status: JobStatus): boolean => finalStatuses.has(status);

/** A change to a job record: `undefined` values remove attributes. */
export type JobChanges = Partial<Omit<JobRecord, 'jobId' | 'version'>>;

/** What a new job is made from: one planned job of a delivery (the delivery lists these). */
export interface PlannedJob {
  jobId: string;
  rule: string;
  templateId: string;
  templateFileId?: string;
}

/** How long a new job may wait for its first worker before the reconciler sends it again. */
export const FIRST_PICKUP_MS = 15 * 60_000;

/**
 * A new job record, queued, with its first pickup due within FIRST_PICKUP_MS. `closesDelivery` marks the
 * delivery's last planned job.
 */
export function newJobRecord(
  integration: string,
  deliveryId: string,
  receivedAt: string,
  nowMs: number,
  plan: PlannedJob,
  closesDelivery = false,
): JobRecord {
  const at = new Date(nowMs).toISOString();
  return {
    jobId: plan.jobId,
    integration,
    rule: plan.rule,
    deliveryId,
    status: 'queued',
    attempts: 0,
    documentsRequested: 0,
    receivedAt,
    createdAt: at,
    updatedAt: at,
    templateId: plan.templateId,
    ...(plan.templateFileId === undefined ? {} : { templateFileId: plan.templateFileId }),
    files: [],
    leaseUntil: nowMs + FIRST_PICKUP_MS,
    ...(closesDelivery ? { closesDelivery } : {}),
    version: 0,
  };
}

/** The delivery's job records, new: its last planned job closes it (`closesDelivery`). */
export const newJobRecords = (
  delivery: Pick<DeliveryRecord, 'integration' | 'deliveryId' | 'receivedAt' | 'jobs'>,
  nowMs: number,
): JobRecord[] =>
  delivery.jobs.map((plan, i, all) =>
    newJobRecord(
      delivery.integration,
      delivery.deliveryId,
      delivery.receivedAt,
      nowMs,
      plan,
      i === all.length - 1,
    ),
  );

/**
 * True when `jobs` hold every job the delivery plans. A delivery recorded in one write with all its jobs needs no
 * outbox of its own: each job's first-pickup lease has the reconciler send it if its message never went out.
 */
export const holdsEveryPlannedJob = (
  delivery: Pick<DeliveryRecord, 'jobs'>,
  jobs: readonly Pick<JobRecord, 'jobId'>[],
): boolean => {
  const written = new Set(jobs.map((job) => job.jobId));
  return delivery.jobs.every((plan) => written.has(plan.jobId));
};

/** The job without its `closesDelivery` mark: its delivery was recorded closed, there is nothing to close. */
export const withoutCloser = (job: JobRecord): JobRecord => {
  const { closesDelivery: _closes, ...rest } = job;
  return rest;
};

const openStatuses: readonly JobStatus[] = ['queued', 'processing', 'created'];

function expect(job: JobRecord, transition: string, from: readonly JobStatus[]): void {
  if (!from.includes(job.status)) throw new InvalidTransitionError(job.jobId, job.status, transition);
}

/** The document without its sealed links (dropped once the job is final). */
export const withoutLinks = (document: JobDocument): JobDocument => {
  const { sealedLinks: _dropped, ...rest } = document;
  return rest;
};

/** The attempt history with this attempt's error appended (the last MAX_ATTEMPT_ERRORS), when `at` is given. */
function recordAttempt(job: JobRecord, error: JobError, at: string | undefined): JobChanges {
  if (at === undefined) return {};
  const entry: AttemptError = { attempt: job.attempts, at, code: error.code, message: error.message };
  return { attemptErrors: [...(job.attemptErrors ?? []), entry].slice(-MAX_ATTEMPT_ERRORS) };
}

/**
 * The job's transitions. Each checks the state it starts from (InvalidTransitionError otherwise) and returns
 * the changes to write; none performs I/O.
 */
export const transitions = {
  /** A worker takes the job for one attempt, holding it until `leaseUntil`. A checkpoint stays `created`. */
  claim(job: JobRecord, owner: string, leaseUntil: number): JobChanges {
    expect(job, 'claim', openStatuses);
    return {
      status: job.status === 'created' ? 'created' : 'processing',
      attempts: job.attempts + 1,
      leaseOwner: owner,
      leaseUntil,
    };
  },
  /**
   * The service generated the document: its id, files and sealed links are the checkpoint. The lease stays as
   * it is: the attempt's heartbeat renews it (moving it here would rewrite the open index's entry).
   */
  created(job: JobRecord, document: JobDocument, files: readonly JobFile[]): JobChanges {
    expect(job, 'created', ['processing']);
    return {
      status: 'created',
      documentsRequested: job.documentsRequested + 1,
      document,
      files: [...files],
      ...(document.templateFileId === undefined ? {} : { templateFileId: document.templateFileId }),
    };
  },
  /** One file landed in storage: checkpointed, so a retry does not copy it again (the lease stays as it is). */
  fileStored(job: JobRecord, stored: JobFile): JobChanges {
    expect(job, 'fileStored', ['created']);
    return { files: job.files.map((f) => (f.fileId === stored.fileId ? stored : f)) };
  },
  /** The links died before every file was copied: the document is dropped and a new one is asked for. */
  linksExpired(job: JobRecord): JobChanges {
    expect(job, 'linksExpired', ['created']);
    return { status: 'processing', document: undefined, files: [] };
  },
  /** Every file is stored: the job is done; the lease and the sealed links go. */
  stored(job: JobRecord): JobChanges {
    expect(job, 'stored', ['created']);
    if (job.document === undefined || job.files.some((file) => file.storedAt === undefined)) {
      throw new InvalidTransitionError(job.jobId, job.status, 'stored (files left to copy)');
    }
    return {
      status: 'stored',
      document: withoutLinks(job.document),
      leaseOwner: undefined,
      leaseUntil: undefined,
      lastError: undefined,
      settledBy: job.leaseOwner,
    };
  },
  /**
   * An attempt failed but the job goes on: back to `queued` (or `created`, keeping the checkpoint), held by
   * `owner` (a message sent to carry it on) or by nobody, until `leaseUntil`.
   */
  release(
    job: JobRecord,
    options: { lastError: JobError; leaseUntil: number; owner?: string; outage?: boolean; at?: string },
  ): JobChanges {
    expect(job, 'release', openStatuses);
    return {
      status: job.document === undefined ? 'queued' : 'created',
      leaseOwner: options.owner,
      leaseUntil: options.leaseUntil,
      lastError: options.lastError,
      ...(options.outage === true ? { outageRetries: (job.outageRetries ?? 0) + 1 } : {}),
      ...recordAttempt(job, options.lastError, options.at),
    };
  },
  /**
   * The job fails for good, with its reason; the sealed links go. `settledBy`: the message whose attempt
   * failed it (@default the lease owner).
   */
  fail(job: JobRecord, error: JobError, lastError?: JobError, at?: string, settledBy?: string): JobChanges {
    expect(job, 'fail', openStatuses);
    return {
      status: 'failed',
      error,
      lastError,
      leaseOwner: undefined,
      leaseUntil: undefined,
      settledBy: settledBy ?? job.leaseOwner,
      ...(job.document === undefined ? {} : { document: withoutLinks(job.document) }),
      ...recordAttempt(job, lastError ?? error, at),
    };
  },
  /** The reconciler sends a stranded job's message again: nobody holds it, and its lease runs anew. */
  resend(job: JobRecord, leaseUntil: number): JobChanges {
    expect(job, 'resend', openStatuses);
    return { leaseOwner: undefined, leaseUntil };
  },
  /**
   * A final job runs again (replay, DLQ redrive): from its checkpoint (`created`, when `resumeCopy`), or from
   * the start when `fresh` (document and files dropped). The error is kept as `lastError`.
   */
  replay(job: JobRecord, options: { fresh: boolean; resumeCopy: boolean; leaseUntil: number }): JobChanges {
    expect(job, 'replay', ['failed', 'stored']);
    return {
      status: !options.fresh && options.resumeCopy ? 'created' : 'queued',
      error: undefined,
      lastError: job.error ?? job.lastError,
      leaseOwner: undefined,
      leaseUntil: options.leaseUntil,
      settledBy: undefined,
      ...(options.fresh ? { document: undefined, files: [], replacedFiles: replacedBy(job) } : {}),
    };
  },
} as const;

/** The files a fresh replay of `job` replaces: its stored ones, and those an earlier fresh replay left to remove. */
function replacedBy(job: JobRecord): JobRecord['replacedFiles'] {
  const files = new Map<string, { bucket: string; key: string }>();
  for (const file of job.replacedFiles ?? []) files.set(`${file.bucket}/${file.key}`, file);
  for (const { bucket, key } of job.files) {
    if (bucket !== undefined && key !== undefined) files.set(`${bucket}/${key}`, { bucket, key });
  }
  return files.size === 0 ? undefined : [...files.values()];
}

/** Applies changes to a record as the repository writes them (version bumped; `undefined` removes). */
export function applyChanges(job: JobRecord, changes: JobChanges, updatedAt: string): JobRecord {
  const next: Record<string, unknown> = { ...job, ...changes, version: job.version + 1, updatedAt };
  for (const [name, value] of Object.entries(changes)) if (value === undefined) delete next[name];
  return next as unknown as JobRecord;
}
