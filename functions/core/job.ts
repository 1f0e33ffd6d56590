/**
 * A job: one document to generate for one matched rule of one delivery, and its small state machine:
 *
 *   queued ──claim──▶ processing ──document created──▶ created ──every file stored──▶ stored
 *      ▲                  │                               │
 *      └──retryable error─┴───────────────────────────────┘ (back to queued, or created keeping the checkpoint)
 *   any open state ──non-retryable error or retries exhausted──▶ failed
 *
 * `created` is the checkpoint: the document's id and files are recorded (the download links only sealed, see
 * seal.ts), so a retry copies the files instead of generating a second document while its links live.
 */

/** Where a job is in its life. `stored` and `failed` are final. */
export type JobStatus = 'queued' | 'processing' | 'created' | 'stored' | 'failed';

/** The job statuses that are final. */
export const finalStatuses: ReadonlySet<JobStatus> = new Set(['stored', 'failed']);

/** A generated file as the job records it: the service's description, and where it landed in S3. */
export interface JobFile {
  fileId: string;
  filename: string;
  mimeType: string;
  /** Size the service gave (bytes). */
  size: number;
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

/** The job record kept in the table. */
export interface JobRecord {
  jobId: string;
  integration: string;
  rule: string;
  deliveryId: string;
  status: JobStatus;
  /** Attempts started (claims). */
  attempts: number;
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
  /** Who holds the job (one message receipt) and until when (epoch ms). */
  leaseOwner?: string;
  /** Epoch ms until which an open job is expected to progress; the reconciler re-enqueues it after. */
  leaseUntil?: number;
  /** Optimistic concurrency: every write checks and bumps it. */
  version: number;
}

/** A delivery: one accepted webhook or event, and the jobs it made. Its key is the dedupe key. */
export interface DeliveryRecord {
  integration: string;
  deliveryId: string;
  receivedAt: string;
  /** The jobs it made: enough to write any missing job record again (the delivery is the outbox). */
  jobs: Array<{ jobId: string; rule: string; templateId: string; templateFileId?: string }>;
  /** Set once every job's message has been sent: a duplicate before then sends them again. */
  enqueuedAt?: string;
  /** The payload, sealed (payload.ts): kept so any job of the delivery can be sent again or replayed. */
  sealedPayload: string;
}

/** True when no more work will happen on a job by itself. */
export const isFinal = (status: JobStatus): boolean => finalStatuses.has(status);
