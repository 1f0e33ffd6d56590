/**
 * Errors of loading the configuration. Every problem is reported at once, each located by its path in the
 * file (`integrations[1].documents[0].data.Plan`) and, when known, its line and column.
 */
import { DocrelayError } from '../commons/errors';

/** One problem of the configuration file. */
export interface ConfigProblem {
  /** Path in the config, e.g. `integrations[1].documents[0].data.Plan` (empty for the whole file). */
  readonly path: string;
  /** What is wrong, and how to fix it when that is clear. */
  readonly message: string;
  /** 1-based line in the file, when known. */
  readonly line?: number;
  /** 1-based column in the file, when known. */
  readonly column?: number;
}

/** Formats one problem as `path: message (file:line:col)`. */
export function formatConfigProblem(problem: ConfigProblem, source?: string): string {
  const head = problem.path === '' ? problem.message : `${problem.path}: ${problem.message}`;
  if (problem.line === undefined || source === undefined) return head;
  return `${head} (${source}:${problem.line}:${problem.column ?? 1})`;
}

/** The configuration cannot be used: it lists every problem found. Never retryable. */
export class ConfigError extends DocrelayError {
  override name = 'ConfigError';
  /** Every problem found, in file order. */
  readonly problems: readonly ConfigProblem[];
  /** The file (or label) the configuration came from. */
  readonly source: string;

  constructor(source: string, problems: readonly ConfigProblem[], options: { cause?: unknown } = {}) {
    const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
    const lines = problems.map((p) => `  - ${formatConfigProblem(p, source)}`);
    super('CONFIG_INVALID', [`${source}: ${count}`, ...lines].join('\n'), options);
    this.problems = problems;
    this.source = source;
  }
}

/** The configuration file cannot be read at all (missing, unreadable). */
export class ConfigFileError extends DocrelayError {
  override name = 'ConfigFileError';
  constructor(path: string, cause: unknown) {
    const reason =
      typeof cause === 'object' && cause !== null && 'code' in cause && cause.code === 'ENOENT'
        ? 'no such file (set DOCRELAY_CONFIG or create config/docrelay.yaml)'
        : cause instanceof Error
          ? cause.message
          : String(cause);
    super('CONFIG_UNREADABLE', `cannot read config ${path}: ${reason}`, { cause });
  }
}
