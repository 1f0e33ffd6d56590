/**
 * The lease a worker holds on a job for one attempt. An attempt may outlast it, so the holder renews the
 * lease and keeps its message invisible, so neither the queue nor the reconciler hands the job on.
 */
import type { JobRepository } from '../ports/job-repository';
import { describeFailure } from './retry-policy';

/** Structured logging: Powertools' Logger, or anything with its four methods. */
export interface Log {
  debug(message: string, ...extra: unknown[]): void;
  info(message: string, ...extra: unknown[]): void;
  warn(message: string, ...extra: unknown[]): void;
  error(message: string, ...extra: unknown[]): void;
}

/** What holding a lease needs. */
export interface LeaseDeps {
  readonly jobs: Pick<JobRepository, 'renewLease'>;
  readonly log: Log;
  /** How long a claim holds the job. */
  readonly leaseMs: number;
  readonly now?: () => number;
}

/** A running heartbeat. */
export interface Heartbeat {
  /** Stops renewing, after the renewal in flight (if any) ends. */
  stop(): Promise<void>;
}

/**
 * Renews the job's lease (and, through `extendVisibility`, the message's) every third of the lease until
 * stopped. A renewal that fails is logged and tried again; a lease found lost (final, or another's) is not.
 */
export function holdLease(
  deps: LeaseDeps,
  jobId: string,
  owner: string,
  extendVisibility?: (seconds: number) => Promise<void>,
): Heartbeat {
  const now = deps.now ?? Date.now;
  let beat: Promise<void> = Promise.resolve();
  let held = true;
  const renew = async (): Promise<void> => {
    if (!held) return;
    try {
      if (!(await deps.jobs.renewLease(jobId, owner, now() + deps.leaseMs))) {
        // Each refused renewal is a failed conditional write: stop, the attempt's own writes will fail too.
        held = false;
        clearInterval(timer);
        deps.log.info('lease no longer held; renewals stopped', { jobId });
        return;
      }
      await extendVisibility?.(Math.ceil(deps.leaseMs / 1000));
    } catch (error) {
      const reason = describeFailure(error);
      deps.log.warn('could not renew the lease', { jobId, code: reason.code, reason: reason.message });
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
