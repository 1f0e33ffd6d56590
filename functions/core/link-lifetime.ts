/**
 * How long the service's download links live, learned since its interface does not say: a link refused at
 * some age bounds the lifetime from above, one served from below. The ages are shared through
 * ServiceEstimates, so every invocation of the worker learns from one refusal.
 */
import type { LinkAges, ServiceEstimates } from '../ports/service-estimates';
import type { Log } from './lease';
import { describeFailure } from './retry-policy';

/** The lifetime planned with before any link was refused: the service's links live about an hour. */
export const DEFAULT_LINK_LIFETIME_MS = 55 * 60_000;

/** How often the shared ages are read again, as another invocation may have learned meanwhile. */
const REFRESH_MS = 30_000;

/** A lifetime less a margin (a tenth, at least half a second) for the time between link and answer. */
export const lessMargin = (ms: number): number => Math.max(0, ms - Math.max(500, ms / 10));

/**
 * The lifetime to plan with from the ages seen: the youngest refusal less the margin. A link served at well
 * over that age says the refusal was not the lifetime (a file removed early, lifetimes that vary): then the
 * oldest served age, less the margin.
 */
export function plannedLifetimeMs(ages: LinkAges | undefined): number {
  const refused = ages?.refusedAtMs;
  if (refused === undefined) return DEFAULT_LINK_LIFETIME_MS;
  const served = ages?.servedAtMs ?? 0;
  return served > refused * 1.5 ? lessMargin(served) : lessMargin(refused);
}

/** What the estimator needs. */
export interface LinkLifetimeOptions {
  /** Where the ages are shared; undefined keeps them in this estimator only. */
  readonly estimates?: ServiceEstimates;
  /** The service's key (its origin). */
  readonly service: string;
  /** A lifetime given by configuration (`service.linkLifetimeSeconds`) or the stack: planned with as is. */
  readonly configuredMs?: number;
  readonly now: () => number;
}

/** The planned link lifetime of one service, and what the worker's downloads tell about it. */
export class LinkLifetime {
  private ages: LinkAges = {};
  private readAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: LinkLifetimeOptions) {}

  /** The lifetime to plan with, in ms. Never throws: when the shared ages cannot be read, the last known. */
  async plannedMs(log: Log): Promise<number> {
    if (this.options.configuredMs !== undefined) return this.options.configuredMs;
    const { estimates, now } = this.options;
    if (estimates !== undefined && now() - this.readAt >= REFRESH_MS) {
      this.readAt = now();
      try {
        this.merge((await estimates.linkAges(this.options.service)) ?? {});
      } catch (error) {
        log.warn('could not read the link lifetime estimate', this.fields(error));
      }
    }
    return plannedLifetimeMs(this.ages);
  }

  /** A link was refused as expired, or served, `ageMs` after its create answer: shared when it is news. */
  async observe(log: Log, kind: 'refused' | 'served', ageMs: number): Promise<void> {
    const known = kind === 'refused' ? this.ages.refusedAtMs : this.ages.servedAtMs;
    const news = known === undefined || (kind === 'refused' ? ageMs < known : ageMs > known * 1.1);
    if (!news) return;
    this.merge(kind === 'refused' ? { refusedAtMs: ageMs } : { servedAtMs: ageMs });
    if (kind === 'refused') {
      log.info('a download link was refused as expired; link lifetime estimate lowered', {
        ageMs: Math.round(ageMs),
        plannedMs: Math.round(plannedLifetimeMs(this.ages)),
      });
    }
    try {
      await this.options.estimates?.recordLinkAge(this.options.service, kind, ageMs);
    } catch (error) {
      log.warn('could not record the link lifetime estimate', this.fields(error));
    }
  }

  private merge(ages: LinkAges): void {
    const min = (a?: number, b?: number) => (a === undefined ? b : b === undefined ? a : Math.min(a, b));
    const max = (a?: number, b?: number) => (a === undefined ? b : b === undefined ? a : Math.max(a, b));
    const refusedAtMs = min(this.ages.refusedAtMs, ages.refusedAtMs);
    const servedAtMs = max(this.ages.servedAtMs, ages.servedAtMs);
    this.ages = {
      ...(refusedAtMs === undefined ? {} : { refusedAtMs }),
      ...(servedAtMs === undefined ? {} : { servedAtMs }),
    };
  }

  private fields(error: unknown) {
    const reason = describeFailure(error);
    return { service: this.options.service, code: reason.code, reason: reason.message };
  }
}
