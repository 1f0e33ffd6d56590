/**
 * The lease a worker holds on a job for one attempt. An attempt may outlast it, so the holder renews the
 * lease and keeps its message invisible, so neither the queue nor the reconciler hands the job on.
 */
import type { JobRepository } from '../ports/job-repository';
import { FIRST_PICKUP_MS } from './job';
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

/** How often the holder renews its lease: every third of it, at least every second. */
export const renewalIntervalMs = (leaseMs: number): number => Math.max(1000, Math.floor(leaseMs / 3));

/**
 * The leases a claim at `nowMs` may keep instead of setting its own: those that outlast the heartbeat's first
 * renewal with room to spare, and run no later than a claim's own or a new job's first-pickup lease would.
 */
export function keptLeaseRange(nowMs: number, leaseMs: number): { from: number; to: number } {
  const renewal = renewalIntervalMs(leaseMs);
  return {
    from: nowMs + renewal + Math.min(Math.floor(renewal / 2), MAX_RENEWAL_SLACK_MS),
    to: nowMs + Math.max(leaseMs, FIRST_PICKUP_MS),
  };
}

/** The most a kept lease must outlast the first renewal by (a renewal's own latency and retries). */
const MAX_RENEWAL_SLACK_MS = 120_000;

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
  const timer = setInterval(() => {
    beat = beat.then(renew);
  }, renewalIntervalMs(deps.leaseMs));
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await beat;
    },
  };
}
