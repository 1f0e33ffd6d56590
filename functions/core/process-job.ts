/**
 * Processing one job, the worker's domain. A job is claimed with a lease (so a duplicate message cannot make
 * a second document while the first worker lives), mapped, generated, checkpointed (`created`, links sealed),
 * then each file is streamed into S3 and checkpointed in turn. A retry resumes from the last checkpoint; an
 * expired link makes the job ask for a new document, since the service keeps no file past its link.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { S3Client } from '@aws-sdk/client-s3';
import type { JobStore } from '../adapters/dynamodb/job-table';
import type { EventPublisher } from '../adapters/eventbridge/event-publisher';
import type { SecretSource } from '../adapters/local/file-secret-source';
import { copyToS3 } from '../adapters/s3/copy-file';
import { DocrelayError, isRetryable } from '../commons/errors';
import { openJson, sealJson } from '../commons/seal';
import { findRule, type LoadedConfig } from '../config/compile';
import type { DocgenClient } from '../docgen/client';
import {
  DocgenLinkExpiredError,
  DocgenNetworkError,
  DocgenRateLimitedError,
  DocgenTimeoutError,
  DocgenUnavailableError,
} from '../docgen/errors';
import type { DocumentFile } from '../docgen/types';
import { mapRule, type TemplateSource } from '../mapping/mapper';
import { JobConflictError } from './errors';
import type { JobDocument, JobFile, JobRecord } from './job';
import { isFinal } from './job';
import { openPayload } from './payload';
import { renderKey } from './storage-key';
import { DeliveryMissingError, LinksExpiringError, RuleRemovedError } from './worker-errors';

/** Structured logging: Powertools' Logger, or anything with its four methods. */
export type Log = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>;

/** What processing a job needs. */
export interface WorkerDeps {
  readonly config: LoadedConfig;
  readonly jobs: JobStore;
  readonly docgen: DocgenClient;
  readonly templates: TemplateSource;
  readonly s3: S3Client;
  readonly bucket: string;
  readonly events: EventPublisher;
  readonly secrets: SecretSource;
  readonly sealingSecretName: string;
  readonly log: Log;
  /** How long a claim holds the job; at least the queue's visibility timeout. */
  readonly leaseMs: number;
  /** How long the service's download links are trusted to live. @default 55 minutes */
  readonly linkLifetimeMs?: number;
  /** Receives of a message before the queue moves it to the dead-letter queue. */
  readonly maxReceiveCount: number;
  /** Multipart part size for the copy. */
  readonly partSize?: number;
  /** Base of the exponential backoff between attempts, in seconds. @default 5 */
  readonly retryBaseSeconds?: number;
  /**
   * How long after a job was received it keeps waiting out the service being unavailable (429, 5xx, timeouts,
   * network errors), whatever the queue's receive count: past its last receive such a job is sent again as a
   * new message instead of failing. 0 makes outages count like any retryable error. @default 24 hours
   */
  readonly outageBudgetMs?: number;
  readonly now?: () => number;
  readonly random?: () => number;
}

/**
 * What happened to one message: done (delete it), try again after a delay (keep it, deferred), or requeued
 * (a new message was sent to try again after the delay: delete this one).
 */
export type JobOutcome =
  | { readonly kind: 'stored' | 'failed' | 'skipped'; readonly job?: JobRecord }
  | {
      readonly kind: 'retry' | 'requeued';
      readonly delaySeconds: number;
      readonly error: { code: string; message: string };
    };

/** The message being processed: its id (the lease owner) and how often it was received. */
export interface Receipt {
  readonly messageId: string;
  readonly receiveCount: number;
  /** Keeps the message invisible for `seconds` more while the attempt runs. */
  readonly extendVisibility?: (seconds: number) => Promise<void>;
  /** Sends a new message for the job, visible after `delaySeconds`; resolves to its message id. */
  readonly requeue?: (delaySeconds: number) => Promise<string>;
}

const DEFAULT_LINK_LIFETIME_MS = 55 * 60_000;
const DEFAULT_RETRY_BASE_SECONDS = 5;
const DEFAULT_OUTAGE_BUDGET_MS = 24 * 3_600_000;
/** Regenerations of a document within one attempt when links keep expiring. */
const MAX_REGENERATIONS_PER_ATTEMPT = 2;

/** Processes one job message. Never throws for a job's own failure: it returns the outcome. */
export async function processJob(deps: WorkerDeps, jobId: string, receipt: Receipt): Promise<JobOutcome> {
  const now = deps.now ?? Date.now;
  let job = await deps.jobs.getJob(jobId);
  if (job === undefined) {
    deps.log.warn('message for a job that does not exist; dropped', { jobId });
    return { kind: 'skipped' };
  }
  if (isFinal(job.status)) return { kind: 'skipped', job };
  if (job.leaseOwner !== undefined && job.leaseOwner !== receipt.messageId && (job.leaseUntil ?? 0) > now()) {
    // Another worker holds the job: this message is a duplicate (a sender's retry, a resend). The holder keeps
    // its own message alive while it works, and that message returns if the holder dies, so this one can go.
    // Deferring it instead would only walk it, receive by receive, into the dead-letter queue.
    deps.log.info('duplicate message for a job another worker holds; dropped', { jobId });
    return { kind: 'skipped', job };
  }
  try {
    job = await deps.jobs.updateJob(job, {
      status: job.status === 'created' ? 'created' : 'processing',
      attempts: job.attempts + 1,
      leaseOwner: receipt.messageId,
      leaseUntil: now() + deps.leaseMs,
    });
  } catch (error) {
    if (error instanceof JobConflictError) {
      return { kind: 'retry', delaySeconds: 1, error: { code: error.code, message: error.message } };
    }
    throw error;
  }
  // An attempt may outlast the lease (a slow generation, a large file): while it runs, it keeps its lease and
  // its message, so neither the queue nor the reconciler hands the job to a second worker meanwhile.
  const heartbeat = holdLease(deps, job.jobId, receipt);
  try {
    job = await runClaimedJob(deps, job);
  } catch (error) {
    await heartbeat.stop();
    return settleFailure(deps, job, error, receipt);
  }
  await heartbeat.stop();
  await publish(deps, 'Document Stored', job);
  deps.log.info('job stored', { jobId, files: job.files.length, attempts: job.attempts });
  return { kind: 'stored', job };
}

/** Renews the job's lease and the message's visibility every third of the lease until stopped. */
function holdLease(deps: WorkerDeps, jobId: string, receipt: Receipt): { stop(): Promise<void> } {
  const now = deps.now ?? Date.now;
  let beat: Promise<void> = Promise.resolve();
  const renew = async (): Promise<void> => {
    try {
      if (!(await deps.jobs.renewLease(jobId, receipt.messageId, now() + deps.leaseMs))) return;
      await receipt.extendVisibility?.(Math.ceil(deps.leaseMs / 1000));
    } catch (error) {
      deps.log.warn('could not renew the lease', { jobId, ...logFields(describe(error)) });
    }
  };
  const timer = setInterval(
    () => {
      beat = beat.then(renew);
    },
    Math.max(1000, Math.floor(deps.leaseMs / 3)),
  );
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await beat;
    },
  };
}

async function runClaimedJob(deps: WorkerDeps, claimed: JobRecord): Promise<JobRecord> {
  const now = deps.now ?? Date.now;
  let job = claimed;
  const sealingSecret = await deps.secrets.get(deps.sealingSecretName);
  for (let generation = 0; ; generation += 1) {
    let links = liveLinks(job, sealingSecret, now());
    if (links === undefined) {
      if (generation > MAX_REGENERATIONS_PER_ATTEMPT) {
        throw new LinksExpiringError();
      }
      ({ job, links } = await generateDocument(deps, job, sealingSecret));
    }
    try {
      for (const file of job.files) {
        if (file.storedAt !== undefined) continue;
        job = await storeFile(deps, job, file, links);
      }
      break;
    } catch (error) {
      if (!(error instanceof DocgenLinkExpiredError)) throw error;
      deps.log.warn('download link expired before the copy finished; asking for a new document', {
        jobId: job.jobId,
      });
      job = await deps.jobs.updateJob(job, { document: undefined, files: [], status: 'processing' });
    }
  }
  const { sealedLinks: _dropped, ...document } = job.document as JobDocument;
  return deps.jobs.updateJob(job, {
    status: 'stored',
    document,
    leaseOwner: undefined,
    leaseUntil: undefined,
    lastError: undefined,
  });
}

/** The checkpointed links, when the document exists, its links should still live, and the seal opens. */
function liveLinks(job: JobRecord, secret: string, nowMs: number): Record<string, string> | undefined {
  const document = job.document;
  if (job.status !== 'created' || document?.sealedLinks === undefined) return undefined;
  if (Date.parse(document.linksExpireAt) <= nowMs) return undefined;
  const links = openJson(document.sealedLinks, secret, `links:${job.jobId}`);
  if (links === null || typeof links !== 'object' || Array.isArray(links)) return undefined;
  const result: Record<string, string> = {};
  for (const [id, url] of Object.entries(links)) if (typeof url === 'string') result[id] = url;
  return job.files.every((file) => file.storedAt !== undefined || Object.hasOwn(result, file.fileId))
    ? result
    : undefined;
}

/** Maps the delivery's payload and has the service generate the document; checkpoints it as `created`. */
async function generateDocument(
  deps: WorkerDeps,
  job: JobRecord,
  sealingSecret: string,
): Promise<{ job: JobRecord; links: Record<string, string> }> {
  const now = deps.now ?? Date.now;
  const rule = findRule(deps.config, job.integration, job.rule);
  if (rule === undefined) throw new RuleRemovedError(job.integration, job.rule);
  const delivery = await deps.jobs.getDelivery(job.integration, job.deliveryId);
  if (delivery === undefined) {
    throw new DeliveryMissingError(job.deliveryId);
  }
  const payload = openPayload(delivery.sealedPayload, sealingSecret, job.integration, job.deliveryId);
  const template = await deps.templates.getTemplate(job.templateId);
  const mapped = await mapRule(
    rule,
    {
      body: JSON.parse(payload.bodyText),
      headers: payload.headers,
      query: payload.query,
      receivedAt: job.receivedAt,
    },
    template,
  );
  const created = await deps.docgen.createDocument({
    templateId: mapped.templateId,
    data: mapped.data,
    template,
    ...(mapped.templateFileId === undefined ? {} : { templateFileId: mapped.templateFileId }),
  });
  const createdAt = now();
  const links = Object.fromEntries(created.files.map((file) => [file.id, file.downloadUrl]));
  const document: JobDocument = {
    id: created.id,
    name: created.name,
    templateId: mapped.templateId,
    ...(mapped.templateFileId === undefined ? {} : { templateFileId: mapped.templateFileId }),
    createdAt: new Date(createdAt).toISOString(),
    linksExpireAt: new Date(createdAt + (deps.linkLifetimeMs ?? DEFAULT_LINK_LIFETIME_MS)).toISOString(),
    sealedLinks: sealJson(links, sealingSecret, `links:${job.jobId}`),
  };
  const updated = await deps.jobs.updateJob(job, {
    status: 'created',
    documentsRequested: job.documentsRequested + 1,
    document,
    files: created.files.map(toJobFile),
    ...(mapped.templateFileId === undefined ? {} : { templateFileId: mapped.templateFileId }),
    leaseUntil: now() + deps.leaseMs,
  });
  deps.log.info('document created', {
    jobId: job.jobId,
    documentId: created.id,
    files: created.files.length,
  });
  return { job: updated, links };
}

const toJobFile = (file: DocumentFile): JobFile => ({
  fileId: file.id,
  filename: file.filename,
  mimeType: file.mimeType,
  size: file.size,
});

/** Streams one file from its download link into S3 and checkpoints it. */
async function storeFile(
  deps: WorkerDeps,
  job: JobRecord,
  file: JobFile,
  links: Readonly<Record<string, string>>,
): Promise<JobRecord> {
  const now = deps.now ?? Date.now;
  const document = job.document as JobDocument;
  const key = renderKey(deps.config.config.storage.keyPattern, {
    integration: job.integration,
    rule: job.rule,
    jobId: job.jobId,
    deliveryId: job.deliveryId,
    documentId: document.id,
    templateId: document.templateId,
    ...(document.templateFileId === undefined ? {} : { templateFileId: document.templateFileId }),
    fileId: file.fileId,
    filename: file.filename,
    at: new Date(job.receivedAt),
  });
  const download = await deps.docgen.download(links[file.fileId] as string);
  const result = await copyToS3({
    s3: deps.s3,
    bucket: deps.bucket,
    key,
    body: download.body,
    ...(download.contentLength === undefined ? {} : { contentLength: download.contentLength }),
    expectedSize: file.size,
    contentType: file.mimeType || download.contentType || 'application/octet-stream',
    metadata: {
      'docrelay-job': job.jobId,
      'docrelay-integration': job.integration,
      'docrelay-rule': job.rule,
      'docrelay-delivery': encodeURIComponent(job.deliveryId),
      'docrelay-document': document.id,
      'docrelay-template': document.templateId,
      'docrelay-template-file': document.templateFileId ?? '',
      'docrelay-file': file.fileId,
      'docrelay-filename': encodeURIComponent(file.filename),
    },
    ...(deps.partSize === undefined ? {} : { partSize: deps.partSize }),
  });
  if (download.contentLength !== undefined && file.size !== result.size) {
    deps.log.warn('the service announced a size other than the bytes downloaded', {
      jobId: job.jobId,
      fileId: file.fileId,
      announced: file.size,
      received: result.size,
    });
  }
  const stored: JobFile = {
    ...file,
    bucket: deps.bucket,
    key,
    sha256: result.sha256,
    storedSize: result.size,
    storedAt: new Date(now()).toISOString(),
  };
  deps.log.info('file stored', { jobId: job.jobId, key, size: result.size });
  return deps.jobs.updateJob(job, {
    files: job.files.map((f) => (f.fileId === file.fileId ? stored : f)),
    leaseUntil: now() + deps.leaseMs,
  });
}

/** Decides what a failed attempt means: retry later (released, deferred) or fail the job for good. */
async function settleFailure(
  deps: WorkerDeps,
  job: JobRecord,
  error: unknown,
  receipt: Receipt,
): Promise<JobOutcome> {
  const now = deps.now ?? Date.now;
  const reason = describe(error);
  const current = (await deps.jobs.getJob(job.jobId)) ?? job;
  if (isFinal(current.status)) return { kind: 'skipped', job: current };
  const retryable = isRetryable(error) || !(error instanceof DocrelayError);
  // Failures so far: the receive count, or the job's attempts when they are more (a requeued message starts
  // its count over), so the backoff keeps growing through a long outage instead of starting again.
  const failures = Math.max(receipt.receiveCount, current.attempts);
  if (
    retryable &&
    receipt.receiveCount >= deps.maxReceiveCount &&
    receipt.requeue !== undefined &&
    isServiceOutage(error) &&
    now() - Date.parse(current.receivedAt) < (deps.outageBudgetMs ?? DEFAULT_OUTAGE_BUDGET_MS)
  ) {
    // The queue allows no more receives of this message, but the service being unavailable says nothing
    // about the job: a new message waits out the outage. It is the job's lease owner until it runs, so this
    // message, should it come back (its delete failed), is dropped rather than doubling the job's messages.
    const delaySeconds = backoffSeconds(deps, error, failures);
    try {
      const messageId = await receipt.requeue(delaySeconds);
      await deps.jobs.updateJob(current, {
        status: current.document === undefined ? 'queued' : 'created',
        leaseOwner: messageId,
        leaseUntil: now() + delaySeconds * 1000 + deps.leaseMs,
        lastError: reason,
      });
      deps.log.warn('job attempt failed while the service is unavailable; sent again', {
        jobId: job.jobId,
        ...logFields(reason),
        delaySeconds,
      });
      return { kind: 'requeued', delaySeconds, error: reason };
    } catch (requeueError) {
      // The new message or its lease did not make it: this message goes on as any retry would (the
      // reconciler resends the job if the queue dead-letters it meanwhile).
      deps.log.warn('could not send the job again', {
        jobId: job.jobId,
        ...logFields(describe(requeueError)),
      });
      return { kind: 'retry', delaySeconds, error: reason };
    }
  }
  if (retryable && receipt.receiveCount < deps.maxReceiveCount) {
    const delaySeconds = backoffSeconds(deps, error, failures);
    await deps.jobs
      .updateJob(current, {
        status: current.document === undefined ? 'queued' : 'created',
        leaseOwner: undefined,
        leaseUntil: now() + delaySeconds * 1000 + deps.leaseMs,
        lastError: reason,
      })
      .catch((e: unknown) =>
        deps.log.warn('could not release the job', { jobId: job.jobId, error: describe(e) }),
      );
    deps.log.warn('job attempt failed; will retry', { jobId: job.jobId, ...logFields(reason), delaySeconds });
    return { kind: 'retry', delaySeconds, error: reason };
  }
  const final = retryable
    ? {
        code: 'RETRIES_EXHAUSTED',
        message: `gave up after ${receipt.receiveCount} attempts: ${reason.message}`,
      }
    : reason;
  const failed = await deps.jobs.updateJob(current, {
    status: 'failed',
    error: final,
    lastError: retryable ? reason : undefined,
    leaseOwner: undefined,
    leaseUntil: undefined,
    ...(current.document === undefined ? {} : { document: withoutLinks(current.document) }),
  });
  deps.log.error('job failed', { jobId: job.jobId, ...logFields(final) });
  await publish(deps, 'Document Failed', failed);
  return { kind: 'failed', job: failed };
}

const withoutLinks = (document: JobDocument): JobDocument => {
  const { sealedLinks: _dropped, ...rest } = document;
  return rest;
};

/** The service is unavailable or limiting us (not a fault of the job): 429, 5xx, a timeout, the network. */
const isServiceOutage = (error: unknown): boolean =>
  error instanceof DocgenRateLimitedError ||
  error instanceof DocgenUnavailableError ||
  error instanceof DocgenTimeoutError ||
  error instanceof DocgenNetworkError;

/** Exponential backoff with full jitter, at least what a rate limit asked for, at most 15 minutes. */
function backoffSeconds(deps: WorkerDeps, error: unknown, failures: number): number {
  const random = deps.random ?? Math.random;
  const base = deps.retryBaseSeconds ?? DEFAULT_RETRY_BASE_SECONDS;
  const ceiling = Math.min(900, base * 2 ** Math.min(30, Math.max(0, failures - 1)));
  const jittered = Math.ceil(random() * ceiling);
  const asked =
    error instanceof DocgenRateLimitedError && error.retryAfterMs !== undefined
      ? error.retryAfterMs / 1000
      : 0;
  return Math.min(900, Math.max(1, jittered, Math.ceil(asked)));
}

/** A job error as it may be recorded: code and message, never a secret (messages are built without them). */
function describe(error: unknown): { code: string; message: string } {
  if (error instanceof DocrelayError) return { code: error.code, message: error.message.slice(0, 1000) };
  return { code: 'INTERNAL', message: 'unexpected error (see the worker logs)' };
}

/** A job error as log fields: `message` is a key Powertools' Logger reserves (and would drop). */
const logFields = (error: { code: string; message: string }) => ({ code: error.code, reason: error.message });

async function publish(
  deps: WorkerDeps,
  type: 'Document Stored' | 'Document Failed',
  job: JobRecord,
): Promise<void> {
  try {
    await deps.events.publish(type, {
      jobId: job.jobId,
      integration: job.integration,
      rule: job.rule,
      deliveryId: job.deliveryId,
      status: job.status,
      attempts: job.attempts,
      ...(job.document === undefined
        ? {}
        : { documentId: job.document.id, templateId: job.document.templateId }),
      files: job.files
        .filter((file) => file.key !== undefined)
        .map((file) => ({ bucket: file.bucket, key: file.key, size: file.storedSize, sha256: file.sha256 })),
      ...(job.error === undefined ? {} : { error: job.error }),
    });
  } catch (error) {
    // The job's state is the record of truth; a lost notification must not undo a stored document.
    deps.log.error('could not publish the event', { jobId: job.jobId, type, error: describe(error) });
  }
}
