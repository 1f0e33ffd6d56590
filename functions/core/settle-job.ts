/**
 * How an attempt ends when it does not simply store the job: a failure decided by retry-policy.ts and
 * recorded (released, requeued or failed), and the settled job's event, published at least once.
 */
import { jobFilesPrefix } from './copy-files';
import type { JobRecord } from './job';
import { isFinal, transitions } from './job';
import { decideRetry, describeFailure, type FailureReason, fitDelayToLinks } from './retry-policy';
import { logFields, type Worker } from './worker-deps';

/** What became of a settled job's event, when it did not simply go out (see `announce`). */
export type EventFollowUp = {
  /** The job's event could not be published: keep the message, which comes back after this many seconds. */
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

/** Decides what a failed attempt means (retry-policy.ts) and records it: released, requeued or failed. */
export async function settleFailure(
  w: Worker,
  job: JobRecord,
  error: unknown,
  receipt: Receipt,
): Promise<JobOutcome> {
  const current = (await w.jobs.getJob(job.jobId)) ?? job;
  if (isFinal(current.status)) return { kind: 'skipped', job: current };
  const decision = decideRetry({
    error,
    receiveCount: receipt.receiveCount,
    maxReceiveCount: w.maxReceiveCount,
    attempts: current.attempts,
    receivedAtMs: Date.parse(current.receivedAt),
    nowMs: w.now(),
    outageBudgetMs: w.outageBudgetMs,
    canRequeue: receipt.requeue !== undefined,
    retryBaseSeconds: w.retryBaseSeconds,
    random: w.random(),
  });
  if (decision.kind === 'requeue' && receipt.requeue !== undefined) {
    // The queue allows no more receives of this message, but the service being unavailable says nothing
    // about the job: a new message waits out the outage. It is the job's lease owner until it runs, so this
    // message, should it come back (its delete failed), is dropped rather than doubling the job's messages.
    const { delaySeconds, reason } = decision;
    try {
      const messageId = await receipt.requeue(delaySeconds);
      await w.jobs.updateJob(
        current,
        transitions.release(current, {
          owner: messageId,
          leaseUntil: w.now() + delaySeconds * 1000 + w.leaseMs,
          lastError: reason,
          outage: true,
          at: new Date(w.now()).toISOString(),
        }),
      );
      w.log.warn('job attempt failed while the service is unavailable; sent again', {
        jobId: job.jobId,
        ...logFields(reason),
        delaySeconds,
      });
      return { kind: 'requeued', delaySeconds, error: reason };
    } catch (requeueError) {
      // The new message or its lease did not make it: this message goes on as any retry would (the
      // reconciler resends the job if the queue dead-letters it meanwhile).
      w.log.warn('could not send the job again', {
        jobId: job.jobId,
        ...logFields(describeFailure(requeueError)),
      });
      return { kind: 'retry', delaySeconds, error: reason };
    }
  }
  if (decision.kind === 'retry' || decision.kind === 'requeue') {
    const { reason } = decision;
    // A checkpoint whose links should still live: the next attempt should start while they do, and copy.
    const linksExpireAt = await plannedExpiry(w, current);
    const delaySeconds =
      current.status === 'created' && linksExpireAt > w.now()
        ? fitDelayToLinks(decision.delaySeconds, error, linksExpireAt - w.now())
        : decision.delaySeconds;
    await w.jobs
      .updateJob(
        current,
        transitions.release(current, {
          leaseUntil: w.now() + delaySeconds * 1000 + w.leaseMs,
          lastError: reason,
          outage: decision.kind === 'retry' && decision.outage,
          at: new Date(w.now()).toISOString(),
        }),
      )
      .catch((e: unknown) =>
        w.log.warn('could not release the job', { jobId: job.jobId, ...logFields(describeFailure(e)) }),
      );
    w.log.warn('job attempt failed; will retry', { jobId: job.jobId, ...logFields(reason), delaySeconds });
    return { kind: 'retry', delaySeconds, error: reason };
  }
  return failJob(w, current, receipt, decision.error, decision.lastError);
}

/**
 * When a job's kept links should expire: the earlier of the recorded expiry and their creation plus the
 * lifetime planned now, which may have been learned since; NaN without kept links.
 */
export async function plannedExpiry(w: Worker, job: JobRecord): Promise<number> {
  const document = job.document;
  if (document?.sealedLinks === undefined) return Number.NaN;
  const recorded = Date.parse(document.linksExpireAt);
  const planned = Date.parse(document.createdAt) + (await w.links.plannedMs(w.log));
  return Number.isNaN(recorded) ? planned : Math.min(recorded, planned);
}

/**
 * Once a job is stored, removes the files `replacedFiles` lists (a fresh replay's, or one a dead worker left
 * before its checkpoint) that its files did not overwrite, then forgets them. Best effort: a failure is logged.
 */
export async function removeReplacedFiles(w: Worker, job: JobRecord): Promise<JobRecord> {
  if (job.replacedFiles === undefined) return job;
  const kept = new Set(job.files.map((file) => `${file.bucket}/${file.key}`));
  const stale = job.replacedFiles.filter((file) => !kept.has(`${file.bucket}/${file.key}`));
  try {
    // The store removes from its own bucket: a file the config's earlier bucket holds is left there, named.
    const own = stale.filter((file) => file.bucket === w.store.bucket);
    await w.store.remove(own.map((file) => file.key));
    for (const file of stale) {
      if (file.bucket === w.store.bucket) {
        w.log.info('removed a file the replay replaced', { jobId: job.jobId, key: file.key });
      } else {
        w.log.warn('a file the replay replaced is in another bucket; left there', {
          jobId: job.jobId,
          bucket: file.bucket,
          key: file.key,
        });
      }
    }
    return await w.jobs.updateJob(job, { replacedFiles: undefined });
  } catch (error) {
    w.log.warn('could not remove the files the replay replaced', {
      jobId: job.jobId,
      ...logFields(describeFailure(error)),
    });
    return job;
  }
}

/** How many keys of a job's own prefix are read: far more than one document's files. */
const STRAY_LIST_LIMIT = 100;

/**
 * After a job's second or later attempt (an earlier one may have died after a file landed and before its write):
 * removes the objects under the job's own key prefix that it does not name. Without such a prefix, a key is
 * recorded before its file lands instead (JobCheckpoint.announce). A failure is logged; the job stands.
 */
export async function removeStrays(w: Worker, job: JobRecord): Promise<void> {
  if (job.attempts < 2) return;
  const prefix = jobFilesPrefix(w, job);
  if (prefix === undefined) return;
  try {
    const named = new Set(job.files.filter((file) => file.bucket === w.store.bucket).map((file) => file.key));
    const strays = (await w.store.list(prefix, STRAY_LIST_LIMIT)).filter((key) => !named.has(key));
    if (strays.length === 0) return;
    await w.store.remove(strays);
    for (const key of strays) {
      w.log.info('removed a file an earlier attempt left unrecorded', { jobId: job.jobId, key });
    }
  } catch (error) {
    w.log.warn('could not look for files an earlier attempt left', {
      jobId: job.jobId,
      ...logFields(describeFailure(error)),
    });
  }
}

/** Fails the job for good and publishes `Document Failed`. */
export async function failJob(
  w: Worker,
  job: JobRecord,
  receipt: Receipt,
  error: FailureReason,
  lastError?: FailureReason,
): Promise<JobOutcome> {
  const at = new Date(w.now()).toISOString();
  const failed = await w.jobs.updateJob(job, transitions.fail(job, error, lastError, at, receipt.messageId));
  w.log.error('job failed', { jobId: job.jobId, ...logFields(error) });
  await removeStrays(w, failed);
  return { kind: 'failed', job: failed, ...(await announce(w, failed, receipt)) };
}

/** Longest wait before a message comes back to publish its job's event again. */
const MAX_EVENT_RETRY_SECONDS = 900;

/**
 * Publishes a settled job's event. When it cannot, the message is kept to try again on its return, with a
 * doubling wait; at its last allowed receive the event is given up and an error logged.
 */
export async function announce(w: Worker, job: JobRecord, receipt: Receipt): Promise<EventFollowUp> {
  const type = job.status === 'stored' ? 'Document Stored' : 'Document Failed';
  if (await publish(w, type, job)) return {};
  if (receipt.receiveCount >= w.maxReceiveCount) {
    w.log.error('event not published, and its message has no receive left; given up', {
      jobId: job.jobId,
      type,
    });
    return { eventLost: true };
  }
  const eventRetrySeconds = Math.min(
    MAX_EVENT_RETRY_SECONDS,
    w.retryBaseSeconds * 2 ** (receipt.receiveCount - 1),
  );
  return { eventRetrySeconds };
}

/** Publishes one event; false when it could not (logged). */
async function publish(
  w: Worker,
  type: 'Document Stored' | 'Document Failed',
  job: JobRecord,
): Promise<boolean> {
  try {
    await w.events.publish(type, {
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
    w.log.error('could not publish the event', {
      jobId: job.jobId,
      type,
      ...logFields(describeFailure(error)),
    });
    return false;
  }
}
