/**
 * Processing one job, the worker's domain: claimed with a lease (a duplicate message makes no second document),
 * generated (generate-document.ts), its files streamed into the store (copy-files.ts), its `created` checkpoint
 * written only when the copy is slow or fails (job-checkpoint.ts). A retry resumes from the last checkpoint;
 * failures are judged by retry-policy.ts and recorded by settle-job.ts.
 */

import { copyFiles, dropDocument, keptLinks } from './copy-files';
import { AttemptsExhaustedError, DeliveryMissingError, JobConflictError, LinksExpiringError } from './errors';
import { type EarlyDownload, generateDocument } from './generate-document';
import { type DeliveryRecord, heldByAnother, isFinal, type JobRecord, transitions } from './job';
import { JobCheckpoint } from './job-checkpoint';
import { holdLease, keptLeaseRange } from './lease';
import { describeFailure } from './retry-policy';
import {
  announce,
  failJob,
  type JobOutcome,
  type Receipt,
  removeReplacedFiles,
  removeStrays,
  settleFailure,
} from './settle-job';
import { logFields, resolveWorker, type Worker, type WorkerDeps } from './worker-deps';

export type { Log } from './lease';
export type { EventFollowUp, JobOutcome, Receipt } from './settle-job';
export type { WorkerDeps } from './worker-deps';

/**
 * New documents within one attempt when the service keeps refusing their links: each copy starts as the
 * create answers, so a refusal past this is not a lifetime the worker can beat at once (LINKS_EXPIRING).
 */
const MAX_REGENERATIONS_PER_ATTEMPT = 2;

/** Processes one job message. Never throws for a job's own failure: it returns the outcome. */
export async function processJob(deps: WorkerDeps, jobId: string, receipt: Receipt): Promise<JobOutcome> {
  const w = resolveWorker(deps);
  const startedAt = w.now();
  // The usual case, a job waiting for its worker, is claimed in one write; anything else reads the job first.
  let job =
    (await w.jobs.claimJob({
      jobId,
      owner: receipt.messageId,
      leaseUntil: startedAt + w.leaseMs,
      nowMs: startedAt,
      maxAttempts: w.maxAttempts,
      keepLeaseWithin: keptLeaseRange(startedAt, w.leaseMs),
    })) ?? (await claimAfterReading(w, jobId, receipt));
  if (!('jobId' in job)) return job;
  const delivery =
    job.attempts === 1 && job.closesDelivery === true ? await closeDelivery(w, job) : undefined;
  const heartbeat = holdLease(w, job.jobId, receipt.messageId, receipt.extendVisibility);
  try {
    job = await runClaimedJob(w, job, delivery);
  } catch (error) {
    await heartbeat.stop();
    return settleFailure(w, job, error, receipt);
  }
  await heartbeat.stop();
  w.log.info('job stored', { jobId, files: job.files.length, attempts: job.attempts });
  job = await removeReplacedFiles(w, job);
  await removeStrays(w, job);
  return { kind: 'stored', job, ...(await announce(w, job, receipt)) };
}

/**
 * The claim of a job that was not simply waiting (claimJob refused it): read, then skipped (gone, final, held
 * by another worker), failed (out of attempts) or claimed from what was read (a `created` checkpoint stays
 * `created`). Resolves the claimed job, or the outcome when there is none.
 */
async function claimAfterReading(
  w: Worker,
  jobId: string,
  receipt: Receipt,
): Promise<JobRecord | JobOutcome> {
  const job = await w.jobs.getJob(jobId);
  if (job === undefined) {
    w.log.warn('message for a job that does not exist; dropped', { jobId });
    return { kind: 'skipped' };
  }
  if (isFinal(job.status)) {
    if (job.settledBy !== receipt.messageId) return { kind: 'skipped', job };
    // The message that settled the job is back: its event may not have gone out (the worker died between the
    // job's last write and the event, or the event failed). Published again: at least once.
    w.log.info('message that settled the job came back; publishing its event again', { jobId });
    return { kind: 'skipped', job, settledByThis: true, ...(await announce(w, job, receipt)) };
  }
  if (heldByAnother(job, receipt.messageId, w.now())) {
    // Another worker holds the job: this message is a duplicate (a sender's retry, a resend). The holder keeps
    // its own message alive while it works, and that message returns if the holder dies, so this one can go.
    // Deferring it instead would only walk it, receive by receive, into the dead-letter queue.
    w.log.info('duplicate message for a job another worker holds; dropped', { jobId });
    return { kind: 'skipped', job };
  }
  if (job.attempts - (job.outageRetries ?? 0) >= w.maxAttempts) {
    // Every earlier attempt ended without settling (its worker died, timed out or ran out of memory) or
    // failed: starting another would only repeat that, with a new dead-letter message each time.
    return failJob(w, job, receipt, describeFailure(new AttemptsExhaustedError(job.attempts)));
  }
  try {
    return await w.jobs.updateJob(job, transitions.claim(job, receipt.messageId, w.now() + w.leaseMs));
  } catch (error) {
    if (error instanceof JobConflictError) {
      return { kind: 'retry', delaySeconds: 1, error: describeFailure(error) };
    }
    throw error;
  }
}

/**
 * For a delivery reopened by its ingest's noted failure: the first pickup of its last job proves its messages
 * went out, so it leaves the open index here, and the same call reads its payload. Best effort: the reconciler
 * closes it after its grace otherwise (and the job reads the delivery when it needs it).
 */
async function closeDelivery(w: Worker, job: JobRecord): Promise<DeliveryRecord | undefined> {
  try {
    return await w.jobs.closeDelivery(job.integration, job.deliveryId, new Date(w.now()).toISOString());
  } catch (error) {
    w.log.warn('could not close the delivery; the reconciler will', {
      jobId: job.jobId,
      ...logFields(describeFailure(error)),
    });
    return undefined;
  }
}

/**
 * Copies from the checkpoint's links when there are any (tried whatever their age: only the service can say
 * they died), else generates; a refused link drops the document and asks again, at most
 * MAX_REGENERATIONS_PER_ATTEMPT times. `delivery`, when given, is the job's, read already. A new document's
 * checkpoint is written before any error leaves, so the retry copies from its links.
 */
async function runClaimedJob(
  w: Worker,
  claimed: JobRecord,
  delivery: DeliveryRecord | undefined,
): Promise<JobRecord> {
  let job = claimed;
  let read = delivery;
  const sealingSecret = await w.secrets.get(w.sealingSecretName);
  let links = keptLinks(job, sealingSecret);
  const checkpointed = links !== undefined;
  let checkpoint = new JobCheckpoint(w, job);
  try {
    for (let generation = 0; ; generation += 1) {
      let early: EarlyDownload | undefined;
      if (links === undefined) {
        // A refused document goes first: the next attempt must not try its dead links again.
        if (job.status === 'created') job = await dropDocument(w, job);
        if (generation > MAX_REGENERATIONS_PER_ATTEMPT) throw new LinksExpiringError();
        read ??= await w.jobs.getDelivery(job.integration, job.deliveryId);
        if (read === undefined) throw new DeliveryMissingError(job.deliveryId);
        const generated = await generateDocument(w, job, read, sealingSecret);
        ({ links, early } = generated);
        checkpoint = new JobCheckpoint(w, job, generated.created);
      }
      const copied = await copyFiles(w, checkpoint, links, checkpointed && generation === 0, early);
      job = copied.job;
      if (copied.done) break;
      links = undefined;
    }
    // Stored with its last file (storeFile), unless there was no file to copy.
    return job.status === 'stored' ? job : await checkpoint.write(transitions.stored(job));
  } catch (error) {
    await checkpoint.flushQuietly();
    throw error;
  } finally {
    checkpoint.stop();
  }
}
