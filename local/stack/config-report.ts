/**
 * How configuration problems read on a terminal, the same for `docrelay check`, `npm start` and a config
 * reload: a count, then one located line per problem (file:line:column where known).
 */
import type { ConfigProblem } from '../../functions/config/errors';
import { formatConfigProblem } from '../../functions/config/errors';

/** The config path relative to the working directory when it lies below it. */
export function displayPath(path: string, cwd: string): string {
  return path.startsWith(`${cwd}/`) ? path.slice(cwd.length + 1) : path;
}

/** `<source>: N problems` then `  - <located problem>` per problem; nothing when there is none. */
export function problemLines(source: string, problems: readonly ConfigProblem[]): string[] {
  if (problems.length === 0) return [];
  return [
    `${source}: ${problems.length === 1 ? '1 problem' : `${problems.length} problems`}`,
    ...problems.map((problem) => `  - ${formatConfigProblem(problem, source)}`),
  ];
}

/** `warning: <located problem>` per warning. */
export function warningLines(source: string, warnings: readonly ConfigProblem[]): string[] {
  return warnings.map((warning) => `warning: ${formatConfigProblem(warning, source)}`);
}
