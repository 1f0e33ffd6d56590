/**
 * A new document's `created` checkpoint, written only when it can matter: beside a copy still running
 * CHECKPOINT_AFTER_MS after the create answer, before an attempt ends or retries without every file stored,
 * or else within the first file's write (docs/decisions.md, "The checkpoint is written when the copy is slow").
 */
import { applyChanges, type JobChanges, type JobRecord } from './job';
import { describeFailure } from './retry-policy';
import { logFields, type Worker } from './worker-deps';

/**
 * How long a copy may run after the create answer before the checkpoint is written beside it: a worker dying
 * in a copy this short loses about what one dying while the service generates does, so no write is spent.
 */
export const CHECKPOINT_AFTER_MS = 2_000;

/** The writes of one job during its copy, carrying a pending checkpoint; never two in flight. */
export class JobCheckpoint {
  /** The record as last written. */
  private written: JobRecord;
  /** The `created` changes not written yet. */
  private pending: JobChanges | undefined;
  /** `written` with `pending` applied: the job as the copy sees it. */
  private view: JobRecord;
  /** The timer's checkpoint write, while in flight; it never rejects. */
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  /** `written` as claimed or last written; `pending`, the `created` changes of a document just generated. */
  constructor(
    private readonly w: Worker,
    written: JobRecord,
    pending?: JobChanges,
  ) {
    this.written = written;
    this.pending = pending;
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

  /** Writes `changes` (made from `job`) with the pending checkpoint, after a checkpoint write in flight. */
  async write(changes: JobChanges): Promise<JobRecord> {
    this.stop();
    await this.writing;
    return this.settle(await this.w.jobs.updateJob(this.written, { ...this.pending, ...changes }));
  }

  /** Writes the pending checkpoint now, if not written yet; resolves the job as last written. */
  async flush(): Promise<JobRecord> {
    this.stop();
    await this.writing;
    if (this.pending !== undefined) this.settle(await this.w.jobs.updateJob(this.written, this.pending));
    return this.written;
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

  private settle(job: JobRecord): JobRecord {
    this.written = job;
    this.pending = undefined;
    this.view = job;
    return job;
  }

  /** The timer's write. A failed one leaves the checkpoint pending: the next write carries it. */
  private writeBeside(): void {
    this.timer = undefined;
    const pending = this.pending;
    if (pending === undefined || this.writing !== undefined) return;
    this.writing = this.w.jobs.updateJob(this.written, pending).then(
      (job) => {
        this.settle(job);
      },
      (error: unknown) => this.warn(error),
    );
  }

  private warn(error: unknown): void {
    this.w.log.warn('could not write the checkpoint', {
      jobId: this.written.jobId,
      ...logFields(describeFailure(error)),
    });
  }
}
