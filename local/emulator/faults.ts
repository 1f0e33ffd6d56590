/**
 * Fault injection: rate-limit and server errors, latency, failed and truncated downloads, link lifetime,
 * "fail the next N requests", and an ambiguous create (made, then answered 503). The dice are seeded, so a
 * fixed seed gives the same faults every run.
 */
import { z } from 'zod';

/** Faults the emulator injects. Every rate is 0..1; every default is 0 except `linkTtlMs`. */
export interface FaultSettings {
  /** Share of API requests answered 429 with `Retry-After: retryAfterSeconds`. @default 0 */
  rate429: number;
  /** `Retry-After` value (seconds) on injected 429 and 503 answers, and while paused. @default 0 */
  retryAfterSeconds: number;
  /** Share of API requests answered with a 5xx (500, 502, 503 or 504, by the dice). @default 0 */
  rate5xx: number;
  /** Milliseconds added to every API call (not to download links nor admin routes). @default 0 */
  latencyMs: number;
  /** Milliseconds added to create document only, on top of `latencyMs`. @default 0 */
  generationLatencyMs: number;
  /** Share of downloads answered 500. @default 0 */
  downloadFailRate: number;
  /** Share of downloads that send the full Content-Length, part of the body, then destroy the socket. @default 0 */
  downloadTruncateRate: number;
  /** Lifetime of download links created from now on. @default the emulator's linkTtlMs (1 hour) */
  linkTtlMs: number;
  /** The next `count` authenticated API requests fail with `status`, before any dice. @default undefined */
  failNext?: { count: number; status: number };
  /**
   * The next N create-document requests make their document (counted in stats, its link live) and then
   * answer 503 with `Retry-After`, as a service that fails after the work is done. @default undefined
   */
  failAfterCreateNext?: number;
}

const rate = z.number().min(0).max(1);
const nonNegative = z.number().finite().min(0);

/** Schema of a partial FaultSettings as sent to `PUT /_emulator/faults`: unknown keys are rejected. */
export const faultSettingsPatchSchema = z.strictObject({
  rate429: rate.optional(),
  retryAfterSeconds: nonNegative.optional(),
  rate5xx: rate.optional(),
  latencyMs: nonNegative.optional(),
  generationLatencyMs: nonNegative.optional(),
  downloadFailRate: rate.optional(),
  downloadTruncateRate: rate.optional(),
  linkTtlMs: nonNegative.optional(),
  failNext: z
    .strictObject({ count: z.number().int().min(0), status: z.number().int().min(400).max(599) })
    .optional(),
  failAfterCreateNext: z.number().int().min(0).optional(),
});

/**
 * The soak's fault mix, shared by the soak tests and `npm run load -- --faults`: 20% of API calls 429 with
 * Retry-After 1 s, 10% 5xx, 10% of downloads failed and 5% truncated (the links' lifetime is each run's own).
 */
export const SOAK_FAULTS = {
  rate429: 0.2,
  retryAfterSeconds: 1,
  rate5xx: 0.1,
  downloadFailRate: 0.1,
  downloadTruncateRate: 0.05,
} as const satisfies Partial<FaultSettings>;

/** The default faults: none, with new links living `linkTtlMs`. */
export function defaultFaultSettings(linkTtlMs: number): FaultSettings {
  return {
    rate429: 0,
    retryAfterSeconds: 0,
    rate5xx: 0,
    latencyMs: 0,
    generationLatencyMs: 0,
    downloadFailRate: 0,
    downloadTruncateRate: 0,
    linkTtlMs,
  };
}

/** Validates `patch` and merges it over `current`; throws a readable error when a value is out of range. */
export function mergeFaultSettings(current: FaultSettings, patch: unknown): FaultSettings {
  const parsed = faultSettingsPatchSchema.safeParse(patch);
  if (!parsed.success) throw new Error(`invalid fault settings: ${z.prettifyError(parsed.error)}`);
  const next: FaultSettings = { ...current };
  for (const [key, value] of Object.entries(parsed.data)) {
    if (value !== undefined) Object.assign(next, { [key]: value });
  }
  if (next.failNext !== undefined && next.failNext.count === 0) delete next.failNext;
  if (next.failAfterCreateNext === 0) delete next.failAfterCreateNext;
  return next;
}

/** Seeded dice (mulberry32): fast, deterministic, and good enough to pick faults. */
export class FaultDice {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A number in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** True with probability `p`; rolls only when 0 < p < 1, so disabled faults do not shift the sequence. */
  chance(p: number): boolean {
    if (p <= 0) return false;
    if (p >= 1) return true;
    return this.next() < p;
  }

  /** One element of `items`, by the dice. */
  pick<T>(items: readonly [T, ...T[]]): T {
    return items[Math.floor(this.next() * items.length)] ?? items[0];
  }
}
