/**
 * Processing one job, the worker's domain. A job is claimed with a lease (so a duplicate message cannot make
 * a second document while the first worker lives), mapped, generated, checkpointed (`created`, links sealed),
 * then each file is streamed into the document store and checkpointed in turn. A retry resumes from the last
 * checkpoint; an expired link makes the job ask for a new document, since the service keeps no file past its
 * link. Every state change is a transition of job.ts; what a failure means is decided by retry-policy.ts.
 */
import { openJson, sealJson } from '../commons/seal';
import { findRule, type LoadedConfig } from '../config/compile';
import { DocgenDownloadOriginRefusedError, DocgenLinkExpiredError } from '../docgen/errors';
import type { DocumentFile } from '../docgen/types';
import { mapRule } from '../mapping/mapper';
import type { DocumentService, TemplateSource } from '../ports/document-service';
import type { DocumentStore } from '../ports/document-store';
import type { EventPublisher } from '../ports/event-publisher';
import type { JobRepository } from '../ports/job-repository';
import type { SecretSource } from '../ports/secret-source';
import {
  AttemptsExhaustedError,
  DeliveryMissingError,
  JobConflictError,
  LinksExpiringError,
  RuleRemovedError,
} from './errors';
import {
  applyChanges,
  type DeliveryRecord,
  heldByAnother,
  isFinal,
  type JobDocument,
  type JobFile,
  type JobRecord,
  transitions,
} from './job';
import { holdLease, type Log } from './lease';
import { openPayload, payloadMappingInput } from './payload';
import {
  decideCopyRetry,
  decideRetry,
  describeFailure,
  type FailureReason,
  fitDelayToLinks,
} from './retry-policy';
import { renderKey } from './storage-key';

export type { Log } from './lease';

/** What processing a job needs. */
export interface WorkerDeps {
  readonly config: LoadedConfig;
  readonly jobs: JobRepository;
  readonly docgen: DocumentService;
  readonly templates: TemplateSource;
  readonly store: DocumentStore;
  readonly events: EventPublisher;
  readonly secrets: SecretSource;
  readonly sealingSecretName: string;
  readonly log: Log;
  /** How long a claim holds the job; at least the queue's visibility timeout. */
  readonly leaseMs: number;
  /**
   * How long the service's download links are trusted to live (the job records the expiry this gives; retries
   * of a copy are fitted into it). @default 55 minutes (the service's links live about an hour)
   */
  readonly linkLifetimeMs?: number;
  /** Receives of a message before the queue moves it to the dead-letter queue. */
  readonly maxReceiveCount: number;
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
  /** Waits before a retried download. @default a timer */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** What became of a settled job's event, when it did not simply go out (see `announce`). */
export type EventFollowUp = {
  /**
   * The job's event could not be published: keep the message, which comes back after this many seconds and
   * publishes it again (the job itself is settled).
   */
  readonly eventRetrySeconds?: number;
  /** The job's event could not be published, and its message has no receive left: given up, logged. */
  readonly eventLost?: boolean;
};

/**
 * What happened to one message: done (delete it), try again after a delay (keep it, deferred), or requeued
 * (a new message was sent to try again after the delay: delete this one).
 */
export type JobOutcome =
  | (EventFollowUp & {
      readonly kind: 'stored' | 'failed' | 'skipped';
      readonly job?: JobRecord;
      /**
       * Skipped because the job is settled, and this is the message that settled it, back again: whatever
       * followed its settling (the event, parking a failed job's message) may not have happened.
       */
      readonly settledByThis?: boolean;
    })
  | {
      readonly kind: 'retry' | 'requeued';
      readonly delaySeconds: number;
      readonly error: FailureReason;
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
const DEFAULT_MAX_ATTEMPTS = 10;
/** Regenerations of a document within one attempt when links keep expiring. */
const MAX_REGENERATIONS_PER_ATTEMPT = 2;

/** A job error as log fields: `message` is a key Powertools' Logger reserves (and would drop). */
const logFields = (error: FailureReason) => ({ code: error.code, reason: error.message });

/** Processes one job message. Never throws for a job's own failure: it returns the outcome. */
export async function processJob(deps: WorkerDeps, jobId: string, receipt: Receipt): Promise<JobOutcome> {
  const now = deps.now ?? Date.now;
  const maxAttempts = deps.config.config.jobs?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const startedAt = now();
  // The usual case, a job waiting for its worker, is claimed in one write; anything else reads the job first.
  let job =
    (await deps.jobs.claimJob({
      jobId,
      owner: receipt.messageId,
      leaseUntil: startedAt + deps.leaseMs,
      nowMs: startedAt,
      maxAttempts,
    })) ?? (await claimAfterReading(deps, jobId, receipt, maxAttempts));
  if (!('jobId' in job)) return job;
  const delivery =
    job.attempts === 1 && job.closesDelivery === true ? await closeDelivery(deps, job) : undefined;
  const heartbeat = holdLease(deps, job.jobId, receipt.messageId, receipt.extendVisibility);
  try {
    job = await runClaimedJob(deps, job, delivery);
  } catch (error) {
    await heartbeat.stop();
    return settleFailure(deps, job, error, receipt);
  }
  await heartbeat.stop();
  deps.log.info('job stored', { jobId, files: job.files.length, attempts: job.attempts });
  job = await removeReplacedFiles(deps, job);
  return { kind: 'stored', job, ...(await announce(deps, job, receipt)) };
}

/**
 * The claim of a job that was not simply waiting (claimJob refused it): read, then skipped (gone, final, held
 * by another worker), failed (out of attempts) or claimed from what was read (a `created` checkpoint stays
 * `created`). Resolves the claimed job, or the outcome when there is none.
 */
async function claimAfterReading(
  deps: WorkerDeps,
  jobId: string,
  receipt: Receipt,
  maxAttempts: number,
): Promise<JobRecord | JobOutcome> {
  const now = deps.now ?? Date.now;
  const job = await deps.jobs.getJob(jobId);
  if (job === undefined) {
    deps.log.warn('message for a job that does not exist; dropped', { jobId });
    return { kind: 'skipped' };
  }
  if (isFinal(job.status)) {
    if (job.settledBy !== receipt.messageId) return { kind: 'skipped', job };
    // The message that settled the job is back: its event may not have gone out (the worker died between the
    // job's last write and the event, or the event failed). Published again: at least once.
    deps.log.info('message that settled the job came back; publishing its event again', { jobId });
    return { kind: 'skipped', job, settledByThis: true, ...(await announce(deps, job, receipt)) };
  }
  if (heldByAnother(job, receipt.messageId, now())) {
    // Another worker holds the job: this message is a duplicate (a sender's retry, a resend). The holder keeps
    // its own message alive while it works, and that message returns if the holder dies, so this one can go.
    // Deferring it instead would only walk it, receive by receive, into the dead-letter queue.
    deps.log.info('duplicate message for a job another worker holds; dropped', { jobId });
    return { kind: 'skipped', job };
  }
  if (job.attempts - (job.outageRetries ?? 0) >= maxAttempts) {
    // Every earlier attempt ended without settling (its worker died, timed out or ran out of memory) or
    // failed: starting another would only repeat that, with a new dead-letter message each time.
    return failJob(deps, job, receipt, describeFailure(new AttemptsExhaustedError(job.attempts)));
  }
  try {
    return await deps.jobs.updateJob(job, transitions.claim(job, receipt.messageId, now() + deps.leaseMs));
  } catch (error) {
    if (error instanceof JobConflictError) {
      return { kind: 'retry', delaySeconds: 1, error: describeFailure(error) };
    }
    throw error;
  }
}

/**
 * The first pickup of the delivery's last job proves its messages went out (the ingest sends them in order,
 * in batches, and notes a failed send): the delivery leaves the open index here, so the reconciler only ever
 * sees the ones that went wrong. The same call reads it, for its payload. Best effort: if it fails, the
 * reconciler closes the delivery after its grace (and the job reads the delivery when it needs it).
 */
async function closeDelivery(deps: WorkerDeps, job: JobRecord): Promise<DeliveryRecord | undefined> {
  const now = deps.now ?? Date.now;
  try {
    return await deps.jobs.closeDelivery(job.integration, job.deliveryId, new Date(now()).toISOString());
  } catch (error) {
    deps.log.warn('could not close the delivery; the reconciler will', {
      jobId: job.jobId,
      ...logFields(describeFailure(error)),
    });
    return undefined;
  }
}

/** Generates (unless a checkpoint's links live) and copies; `delivery`, when given, is the job's, read already. */
async function runClaimedJob(
  deps: WorkerDeps,
  claimed: JobRecord,
  delivery: DeliveryRecord | undefined,
): Promise<JobRecord> {
  const now = deps.now ?? Date.now;
  let job = claimed;
  let read = delivery;
  const sealingSecret = await deps.secrets.get(deps.sealingSecretName);
  for (let generation = 0; ; generation += 1) {
    let links = liveLinks(job, sealingSecret, now());
    const checkpointed = links !== undefined;
    if (links === undefined) {
      if (generation > MAX_REGENERATIONS_PER_ATTEMPT) throw new LinksExpiringError();
      if (job.status === 'created') job = await dropDocument(deps, job);
      read ??= await deps.jobs.getDelivery(job.integration, job.deliveryId);
      if (read === undefined) throw new DeliveryMissingError(job.deliveryId);
      ({ job, links } = await generateDocument(deps, job, read, sealingSecret));
    }
    const copied = await copyFiles(deps, job, links, checkpointed);
    job = copied.job;
    if (copied.done) break;
    job = await dropDocument(deps, job);
  }
  // Stored with its last file (storeFile), unless there was no file to copy.
  return job.status === 'stored' ? job : deps.jobs.updateJob(job, transitions.stored(job));
}

const timer = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Copies every file not stored yet. A failed copy is retried at once while the links live (decideCopyRetry);
 * resolves `done: false` when a new document is needed (a link expired, or would before a retry), and throws
 * what the job's retry decision must see. Bounded: each file's copy succeeds or counts a failure, and the
 * failures of one call are capped by MAX_COPY_RETRIES_PER_ATTEMPT.
 */
async function copyFiles(
  deps: WorkerDeps,
  claimed: JobRecord,
  links: Readonly<Record<string, string>>,
  checkpointed: boolean,
): Promise<{ job: JobRecord; done: boolean }> {
  const now = deps.now ?? Date.now;
  let job = claimed;
  let failures = 0;
  for (;;) {
    const file = job.files.find((f) => f.storedAt === undefined);
    if (file === undefined) return { job, done: true };
    try {
      job = await storeFile(deps, job, file, links);
    } catch (error) {
      if (error instanceof DocgenLinkExpiredError) {
        deps.log.warn('download link expired before the copy finished; asking for a new document', {
          jobId: job.jobId,
        });
        return { job, done: false };
      }
      if (checkpointed && error instanceof DocgenDownloadOriginRefusedError) {
        // Links an earlier attempt kept, on an origin no longer allowed: the service moved (the local stack's
        // emulator starts on a new port) or the config changed since. A new document gets links of today's
        // origin; links the service has just made on a refused origin still fail the job (the config is wrong).
        deps.log.warn(
          'the kept download links are on an origin no longer allowed; asking for a new document',
          {
            jobId: job.jobId,
          },
        );
        return { job, done: false };
      }
      failures += 1;
      const linkRemainingMs = Date.parse(job.document?.linksExpireAt ?? '') - now();
      const next = decideCopyRetry({ error, failures, linkRemainingMs: linkRemainingMs || 0 });
      if (next.kind === 'settle') throw error;
      const reason = describeFailure(error);
      if (next.kind === 'regenerate') {
        deps.log.warn('copy failed and the link would expire before a retry; asking for a new document', {
          jobId: job.jobId,
          ...logFields(reason),
        });
        return { job, done: false };
      }
      deps.log.warn('copy failed; downloading again while the link lives', {
        jobId: job.jobId,
        ...logFields(reason),
        pauseMs: next.pauseMs,
      });
      await (deps.sleep ?? timer)(next.pauseMs);
    }
  }
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
  delivery: DeliveryRecord,
  sealingSecret: string,
): Promise<{ job: JobRecord; links: Record<string, string> }> {
  const now = deps.now ?? Date.now;
  const rule = findRule(deps.config, job.integration, job.rule);
  if (rule === undefined) throw new RuleRemovedError(job.integration, job.rule);
  const payload = openPayload(delivery.sealedPayload, sealingSecret, job.integration, job.deliveryId);
  const template = await deps.templates.getTemplate(job.templateId);
  const mapped = await mapRule(rule, payloadMappingInput(payload, job.receivedAt), template);
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
  const updated = await deps.jobs.updateJob(
    job,
    transitions.created(job, document, created.files.map(toJobFile), now() + deps.leaseMs),
  );
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
  ...(file.size === undefined ? {} : { size: file.size }),
});

/** Where one file of a job's document is stored: `storage.keyPattern` rendered for it. */
function fileKey(deps: WorkerDeps, job: JobRecord, document: JobDocument, file: JobFile): string {
  return renderKey(deps.config.config.storage.keyPattern, {
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
}

/**
 * Drops a document whose links died, so that a new one is asked for. First its files' objects go: those it
 * checkpointed, and those a copy may have written without a checkpoint (a worker killed between the PUT and
 * the write, or that write failing). When the key pattern names the document or its files' names, the new
 * document's files land under other keys, and these would stay in the bucket, belonging to no job. A key
 * without an object is fine, and the removal is repeated if this worker dies before the job record says the
 * document is gone. A removal that fails is told and does not stop the job: it leaves a stray copy, never a
 * loss.
 */
async function dropDocument(deps: WorkerDeps, job: JobRecord): Promise<JobRecord> {
  const document = job.document;
  if (document !== undefined && job.files.length > 0) {
    const keys = job.files.map((file) => file.key ?? fileKey(deps, job, document, file));
    try {
      await deps.store.remove(keys);
    } catch (error) {
      deps.log.warn('could not remove the files of a dropped document', {
        jobId: job.jobId,
        documentId: document.id,
        keys,
        ...logFields(describeFailure(error)),
      });
    }
  }
  return deps.jobs.updateJob(job, transitions.linksExpired(job));
}

/** Streams one file from its download link into the document store and checkpoints it. */
async function storeFile(
  deps: WorkerDeps,
  job: JobRecord,
  file: JobFile,
  links: Readonly<Record<string, string>>,
): Promise<JobRecord> {
  const now = deps.now ?? Date.now;
  const document = job.document as JobDocument;
  const key = fileKey(deps, job, document, file);
  const download = await deps.docgen.download(links[file.fileId] as string);
  const result = await deps.store.put({
    key,
    body: download.body,
    ...(download.contentLength === undefined ? {} : { contentLength: download.contentLength }),
    // The service's size checks only a body whose end the transport does not mark (no Content-Length, not
    // chunked): there it is the one guard against a cut. Elsewhere the transport is the authority, and a size
    // in another unit than bytes (the interface page does not give one) must not fail every copy.
    ...(download.framed || file.size === undefined ? {} : { expectedSize: file.size }),
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
  });
  if (download.framed && file.size !== undefined && file.size !== result.size) {
    deps.log.warn('the service announced a size other than the bytes downloaded', {
      jobId: job.jobId,
      fileId: file.fileId,
      announced: file.size,
      received: result.size,
    });
  }
  const stored: JobFile = {
    ...file,
    bucket: result.bucket,
    key: result.key,
    sha256: result.sha256,
    storedSize: result.size,
    storedAt: new Date(now()).toISOString(),
  };
  deps.log.info('file stored', { jobId: job.jobId, key, size: result.size });
  const changes = transitions.fileStored(job, stored, now() + deps.leaseMs);
  const after = applyChanges(job, changes, new Date(now()).toISOString());
  // The last file: its checkpoint and the job's `stored` in one write (one call and one write unit less).
  if (after.files.every((f) => f.storedAt !== undefined)) {
    return deps.jobs.updateJob(job, { ...changes, ...transitions.stored(after) });
  }
  return deps.jobs.updateJob(job, changes);
}

/** Decides what a failed attempt means (retry-policy.ts) and records it: released, requeued or failed. */
async function settleFailure(
  deps: WorkerDeps,
  job: JobRecord,
  error: unknown,
  receipt: Receipt,
): Promise<JobOutcome> {
  const now = deps.now ?? Date.now;
  const current = (await deps.jobs.getJob(job.jobId)) ?? job;
  if (isFinal(current.status)) return { kind: 'skipped', job: current };
  const decision = decideRetry({
    error,
    receiveCount: receipt.receiveCount,
    maxReceiveCount: deps.maxReceiveCount,
    attempts: current.attempts,
    receivedAtMs: Date.parse(current.receivedAt),
    nowMs: now(),
    outageBudgetMs: deps.outageBudgetMs ?? DEFAULT_OUTAGE_BUDGET_MS,
    canRequeue: receipt.requeue !== undefined,
    retryBaseSeconds: deps.retryBaseSeconds ?? DEFAULT_RETRY_BASE_SECONDS,
    random: (deps.random ?? Math.random)(),
  });
  if (decision.kind === 'requeue' && receipt.requeue !== undefined) {
    // The queue allows no more receives of this message, but the service being unavailable says nothing
    // about the job: a new message waits out the outage. It is the job's lease owner until it runs, so this
    // message, should it come back (its delete failed), is dropped rather than doubling the job's messages.
    const { delaySeconds, reason } = decision;
    try {
      const messageId = await receipt.requeue(delaySeconds);
      await deps.jobs.updateJob(
        current,
        transitions.release(current, {
          owner: messageId,
          leaseUntil: now() + delaySeconds * 1000 + deps.leaseMs,
          lastError: reason,
          outage: true,
          at: new Date(now()).toISOString(),
        }),
      );
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
        ...logFields(describeFailure(requeueError)),
      });
      return { kind: 'retry', delaySeconds, error: reason };
    }
  }
  if (decision.kind === 'retry' || decision.kind === 'requeue') {
    const { reason } = decision;
    // A checkpoint whose links still live: the next attempt should start while they do, and copy.
    const linksExpireAt =
      current.document?.sealedLinks === undefined ? NaN : Date.parse(current.document.linksExpireAt);
    const delaySeconds =
      current.status === 'created' && linksExpireAt > now()
        ? fitDelayToLinks(decision.delaySeconds, error, linksExpireAt - now())
        : decision.delaySeconds;
    await deps.jobs
      .updateJob(
        current,
        transitions.release(current, {
          leaseUntil: now() + delaySeconds * 1000 + deps.leaseMs,
          lastError: reason,
          outage: decision.kind === 'retry' && decision.outage,
          at: new Date(now()).toISOString(),
        }),
      )
      .catch((e: unknown) =>
        deps.log.warn('could not release the job', { jobId: job.jobId, ...logFields(describeFailure(e)) }),
      );
    deps.log.warn('job attempt failed; will retry', { jobId: job.jobId, ...logFields(reason), delaySeconds });
    return { kind: 'retry', delaySeconds, error: reason };
  }
  return failJob(deps, current, receipt, decision.error, decision.lastError);
}

/**
 * After a fresh replay's run is stored: removes the previous document's files that the new ones did not
 * overwrite (a new file name, a `{documentId}` key), then forgets them. Best effort: a failure is logged and
 * the list kept, so the next fresh replay of the job takes them on.
 */
async function removeReplacedFiles(deps: WorkerDeps, job: JobRecord): Promise<JobRecord> {
  if (job.replacedFiles === undefined) return job;
  const kept = new Set(job.files.map((file) => `${file.bucket}/${file.key}`));
  const stale = job.replacedFiles.filter((file) => !kept.has(`${file.bucket}/${file.key}`));
  try {
    // The store removes from its own bucket: a file the config's earlier bucket holds is left there, named.
    const own = stale.filter((file) => file.bucket === deps.store.bucket);
    await deps.store.remove(own.map((file) => file.key));
    for (const file of stale) {
      if (file.bucket === deps.store.bucket) {
        deps.log.info('removed a file the replay replaced', { jobId: job.jobId, key: file.key });
      } else {
        deps.log.warn('a file the replay replaced is in another bucket; left there', {
          jobId: job.jobId,
          bucket: file.bucket,
          key: file.key,
        });
      }
    }
    return await deps.jobs.updateJob(job, { replacedFiles: undefined });
  } catch (error) {
    deps.log.warn('could not remove the files the replay replaced', {
      jobId: job.jobId,
      ...logFields(describeFailure(error)),
    });
    return job;
  }
}

/** Fails the job for good and publishes `Document Failed`. */
async function failJob(
  deps: WorkerDeps,
  job: JobRecord,
  receipt: Receipt,
  error: FailureReason,
  lastError?: FailureReason,
): Promise<JobOutcome> {
  const at = new Date((deps.now ?? Date.now)()).toISOString();
  const failed = await deps.jobs.updateJob(
    job,
    transitions.fail(job, error, lastError, at, receipt.messageId),
  );
  deps.log.error('job failed', { jobId: job.jobId, ...logFields(error) });
  return { kind: 'failed', job: failed, ...(await announce(deps, failed, receipt)) };
}

/** Longest wait before a message comes back to publish its job's event again. */
const MAX_EVENT_RETRY_SECONDS = 900;

/**
 * Publishes the event of a settled job (`Document Stored` or `Document Failed`). When it cannot, the message is
 * kept to try again when it comes back (the job records which message settled it), doubling the wait from
 * the retry base; at its last allowed receive the event is given up, with an error logged.
 */
async function announce(deps: WorkerDeps, job: JobRecord, receipt: Receipt): Promise<EventFollowUp> {
  const type = job.status === 'stored' ? 'Document Stored' : 'Document Failed';
  if (await publish(deps, type, job)) return {};
  if (receipt.receiveCount >= deps.maxReceiveCount) {
    deps.log.error('event not published, and its message has no receive left; given up', {
      jobId: job.jobId,
      type,
    });
    return { eventLost: true };
  }
  const base = deps.retryBaseSeconds ?? DEFAULT_RETRY_BASE_SECONDS;
  const eventRetrySeconds = Math.min(MAX_EVENT_RETRY_SECONDS, base * 2 ** (receipt.receiveCount - 1));
  return { eventRetrySeconds };
}

/** Publishes one event; false when it could not (logged). */
async function publish(
  deps: WorkerDeps,
  type: 'Document Stored' | 'Document Failed',
  job: JobRecord,
): Promise<boolean> {
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
    return true;
  } catch (error) {
    // The job's state is the record of truth: a failed event never undoes it (announce tries it again).
    deps.log.error('could not publish the event', {
      jobId: job.jobId,
      type,
      ...logFields(describeFailure(error)),
    });
    return false;
  }
}
