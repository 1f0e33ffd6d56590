/** The rows every benchmark reports, and how they are printed. */
import { type Comparison, fmt, fmtSummary } from './harness';

/** One line of the results table. */
export interface ResultRow {
  /** Which benchmark (ingest, http, copy, cold-start, e2e). */
  readonly benchmark: string;
  /** The case within it, e.g. "20 KB" or "c=4, 200 ms". */
  readonly case: string;
  /** What is measured, with its unit, e.g. "µs/request". */
  readonly metric: string;
  /** docrelay's figure: "median (p25–p75) unit". */
  readonly subject: string;
  /** The baseline's figure, when there is one. */
  readonly baseline?: string;
  /** Subject median / baseline median (or the figure the target is about). */
  readonly ratio?: number;
  /** The target, in words: "≤ 2x", "≥ 0.9x", "< 100 MB". */
  readonly target?: string;
  /** Whether the target is met, when there is one. */
  readonly met?: boolean;
  /** Numbers behind the row, for the JSON file. */
  readonly data?: Readonly<Record<string, unknown>>;
}

/** A row built from a comparison. */
export function comparisonRow(
  base: { benchmark: string; case: string; metric: string; unit: string; target?: string },
  comparison: Comparison,
  meets?: (ratio: number) => boolean,
): ResultRow {
  return {
    benchmark: base.benchmark,
    case: base.case,
    metric: base.metric,
    subject: fmtSummary(comparison.subject, base.unit),
    baseline: fmtSummary(comparison.baseline, base.unit),
    ratio: comparison.ratio,
    ...(base.target === undefined ? {} : { target: base.target }),
    ...(meets === undefined ? {} : { met: meets(comparison.ratio) }),
    data: {
      subject: comparison.subject,
      baseline: comparison.baseline,
      subjectSamples: comparison.subjectSamples,
      baselineSamples: comparison.baselineSamples,
    },
  };
}

/** One row as a console line. */
export function rowLine(row: ResultRow): string {
  const ratio = row.ratio === undefined ? '' : `  ratio ${fmt(row.ratio)}x`;
  const target =
    row.target === undefined
      ? ''
      : `  target ${row.target} ${row.met === undefined ? '' : row.met ? 'MET' : 'NOT MET'}`;
  const baseline = row.baseline === undefined ? '' : `  vs ${row.baseline}`;
  return `[${row.benchmark}] ${row.case} — ${row.metric}: ${row.subject}${baseline}${ratio}${target}`;
}
