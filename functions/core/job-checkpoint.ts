/**
 * A new document's `created` checkpoint, written only when it can matter (docs/decisions.md, "The checkpoint is
 * written when the copy is slow"): beside a copy running CHECKPOINT_AFTER_MS after the create answer, before a
 * failure is handled, else within the first file's write; until then a file's key is listed before it lands.
 */
import { applyChanges, type JobChanges, type JobRecord } from './job';
import { describeFailure } from './retry-policy';
import { logFields, type Worker } from './worker-deps';

/**
 * How long a copy may run after the create answer before the checkpoint is written beside it: a worker dying
 * in a copy this short loses about what one dying while the service generates does, so no write is spent.
 */
export const CHECKPOINT_AFTER_MS = 2_000;

/** The writes of one job during its copy, carrying a pending checkpoint; one at a time. */
export class JobCheckpoint {
  /** The record as last written. */
  private written: JobRecord;
  /** The `created` changes not written yet. */
  private pending: JobChanges | undefined;
  /** `written` with `pending` applied: the job as the copy sees it. */
  private view: JobRecord;
  /** The files a fresh replay left to remove, as claimed: what the checkpoint's write lists again. */
  private readonly replaced: JobRecord['replacedFiles'];
  /** Whether a key was listed among them while the checkpoint was pending (announce). */
  private announced = false;
  /** The last write begun (settled, never rejecting): the next one starts after it. */
  private last: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  /** `written` as claimed or last written; `pending`, the `created` changes of a document just generated. */
  constructor(
    private readonly w: Worker,
    written: JobRecord,
    pending?: JobChanges,
  ) {
    this.written = written;
    this.pending = pending;
    this.replaced = written.replacedFiles;
    this.view = pending === undefined ? written : applyChanges(written, pending, written.updatedAt);
    if (pending !== undefined) {
      this.timer = setTimeout(() => this.writeBeside(), CHECKPOINT_AFTER_MS);
      // A worker about to exit does not wait for a checkpoint.
      this.timer.unref();
    }
  }

  /** The job as the copy sees it: as last written, with the pending checkpoint applied. */
  get job(): JobRecord {
    return this.view;
  }

  /**
   * Before a file lands while the checkpoint is pending: lists its key among the files to remove unless a
   * stored job keeps them (`replacedFiles`), so a worker dying before its next write leaves no object unnamed.
   */
  announce(bucket: string, key: string): Promise<void> {
    return this.serial(async () => {
      if (this.pending === undefined) return;
      const listed = [...(this.written.replacedFiles ?? []), { bucket, key }];
      this.written = await this.w.jobs.updateJob(this.written, { replacedFiles: listed });
      this.announced = true;
    });
  }

  /** Writes `changes` (made from `job`) with the pending checkpoint, after the write in flight. */
  write(changes: JobChanges): Promise<JobRecord> {
    this.stop();
    return this.serial(() => this.update({ ...this.carried(), ...changes }));
  }

  /** Writes the pending checkpoint now, if not written yet; resolves the job as last written. */
  flush(): Promise<JobRecord> {
    this.stop();
    return this.serial(async () => (this.pending === undefined ? this.written : this.update(this.carried())));
  }

  /** Flushes for an attempt that is ending anyway: a failure is logged, the attempt's own error stands. */
  async flushQuietly(): Promise<void> {
    await this.flush().catch((error: unknown) => this.warn(error));
  }

  /** Stops the timer (a write already started goes on). */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The pending checkpoint as a write carries it: with the announced keys taken off again. */
  private carried(): JobChanges {
    if (this.pending === undefined) return {};
    return this.announced ? { ...this.pending, replacedFiles: this.replaced } : this.pending;
  }

  /** One write carrying the pending checkpoint (carried()); the checkpoint is written once it succeeds. */
  private async update(changes: JobChanges): Promise<JobRecord> {
    const job = await this.w.jobs.updateJob(this.written, changes);
    this.written = job;
    this.pending = undefined;
    this.view = job;
    return job;
  }

  /** Runs `step` after the write before it ends, so no two writes of the job are ever in flight. */
  private serial<T>(step: () => Promise<T>): Promise<T> {
    const run = this.last.then(step);
    this.last = run.catch(() => undefined);
    return run;
  }

  /** The timer's write. A failed one leaves the checkpoint pending: the next write carries it. */
  private writeBeside(): void {
    this.timer = undefined;
    void this.serial(async () => {
      if (this.pending !== undefined) await this.update(this.carried());
    }).catch((error: unknown) => this.warn(error));
  }

  private warn(error: unknown): void {
    this.w.log.warn('could not write the checkpoint', {
      jobId: this.written.jobId,
      ...logFields(describeFailure(error)),
    });
  }
}
