/**
 * The benchmark harness: a subject and its baseline measured in one process run, interleaved (the order
 * alternates every round, so drift on a shared, noisy machine hits both alike), after warm-up rounds, and
 * summarised as median and interquartile range for each and the ratio of the medians.
 */

/** One measured sample per round: a duration (lower is better) or a rate (higher is better). */
export type Sampler = () => Promise<number>;

/** Options of `compare`. */
export interface CompareOptions {
  /** Measured rounds; each round takes one sample of the subject and one of the baseline. */
  readonly rounds: number;
  /** Rounds run first and thrown away (JIT, caches, connection pools). @default 1 */
  readonly warmup?: number;
  readonly subject: Sampler;
  readonly baseline: Sampler;
}

/** Median and spread of some samples. */
export interface Summary {
  readonly median: number;
  readonly p25: number;
  readonly p75: number;
  readonly min: number;
  readonly max: number;
  readonly n: number;
}

/** Subject and baseline summarised, and subject median / baseline median. */
export interface Comparison {
  readonly subject: Summary;
  readonly baseline: Summary;
  readonly ratio: number;
  readonly subjectSamples: readonly number[];
  readonly baselineSamples: readonly number[];
}

/** The value at quantile `q` (0..1) of sorted samples, linearly interpolated. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  const lowValue = sorted[low] as number;
  const highValue = sorted[high] as number;
  return lowValue + (highValue - lowValue) * (position - low);
}

/** Median, quartiles and range of samples. */
export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    median: quantile(sorted, 0.5),
    p25: quantile(sorted, 0.25),
    p75: quantile(sorted, 0.75),
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
    n: sorted.length,
  };
}

/** Runs subject and baseline interleaved for `rounds` (after `warmup`) and compares their medians. */
export async function compare(options: CompareOptions): Promise<Comparison> {
  const subjectSamples: number[] = [];
  const baselineSamples: number[] = [];
  const warmup = options.warmup ?? 1;
  for (let round = 0; round < warmup + options.rounds; round += 1) {
    // Alternate who goes first, so neither always runs on a warmer (or more throttled) machine.
    const subjectFirst = round % 2 === 0;
    const first = subjectFirst ? options.subject : options.baseline;
    const second = subjectFirst ? options.baseline : options.subject;
    const a = await first();
    const b = await second();
    if (round < warmup) continue;
    subjectSamples.push(subjectFirst ? a : b);
    baselineSamples.push(subjectFirst ? b : a);
  }
  const subject = summarize(subjectSamples);
  const baseline = summarize(baselineSamples);
  return { subject, baseline, ratio: subject.median / baseline.median, subjectSamples, baselineSamples };
}

/**
 * A sampler of a synchronous-or-async operation's time per call, in microseconds: runs it in batches of
 * `batch` calls (so timer resolution does not matter) and returns the mean of one batch.
 */
export function perCall(operation: () => unknown | Promise<unknown>, batch: number): Sampler {
  return async () => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < batch; i += 1) await operation();
    return Number(process.hrtime.bigint() - start) / 1000 / batch;
  };
}

/**
 * Like `perCall`, but CPU time (`process.cpuUsage`, user + system, every thread of the process) per call in
 * microseconds: the measure for work that waits on I/O in between (loopback servers in the same process
 * count too, on both sides of a comparison).
 */
export function perCallCpu(operation: () => unknown | Promise<unknown>, batch: number): Sampler {
  return async () => {
    const start = process.cpuUsage();
    for (let i = 0; i < batch; i += 1) await operation();
    const used = process.cpuUsage(start);
    return (used.user + used.system) / batch;
  };
}

/** Picks a batch size so that one batch of `operation` takes about `targetMs` (bounded to 1..100_000). */
export async function calibrate(
  operation: () => unknown | Promise<unknown>,
  targetMs: number,
): Promise<number> {
  let batch = 1;
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < batch; i += 1) await operation();
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (ms >= targetMs / 4 || batch >= 100_000) {
      return Math.max(1, Math.min(100_000, Math.round((batch * targetMs) / Math.max(ms, 0.001))));
    }
    batch *= 4;
  }
  return batch;
}

/** `123.4` → "123", `1.234` → "1.23": three significant digits at most, no false precision. */
export function fmt(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toPrecision(2);
}

/** "median (p25–p75)" of a summary, with a unit. */
export const fmtSummary = (s: Summary, unit: string): string =>
  `${fmt(s.median)} ${unit} (${fmt(s.p25)}–${fmt(s.p75)})`;
