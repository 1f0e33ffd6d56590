/**
 * Input handling shared by the CLI commands (map, send, put-event): the configuration with its first problem
 * on one line, the integration, input files and the content type their extension implies, and repeated
 * `--header`/`--query` pairs.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { CompiledIntegration, LoadedConfig } from '../../functions/config/compile';
import { ConfigError, formatConfigProblem } from '../../functions/config/errors';
import { loadConfigFile } from '../../functions/config/load';
import { CliError } from './types';

/** Loads the configuration; an invalid one fails with its first problem on one line. */
export async function loadConfigOrExplain(path: string): Promise<LoadedConfig> {
  try {
    return await loadConfigFile(path);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const first = error.problems[0];
    const more =
      error.problems.length > 1 ? ` (and ${error.problems.length - 1} more: run docrelay check)` : '';
    throw new CliError(`${first ? formatConfigProblem(first, error.source) : error.message}${more}`);
  }
}

/** The integration with that id; unknown ids fail with the configured ones listed (this is the user's CLI). */
export function findIntegration(loaded: LoadedConfig, integrationId: string): CompiledIntegration {
  const integration = loaded.integrations.get(integrationId);
  if (integration === undefined) {
    throw new CliError(
      `unknown integration "${integrationId}"; configured: ${[...loaded.integrations.keys()].join(', ')}`,
    );
  }
  return integration;
}

/** Reads an input file's bytes, relative to the working directory. */
export async function readInputFile(cwd: string, path: string, what: string): Promise<Buffer> {
  const full = resolve(cwd, path);
  try {
    return await readFile(full);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(`cannot read ${what} ${full}${code === undefined ? '' : ` (${code})`}`);
  }
}

/** The content type a payload file's extension implies; JSON when the extension says nothing. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.json': 'application/json',
  '.xml': 'application/xml',
  '.txt': 'text/plain',
  '.form': 'application/x-www-form-urlencoded',
  '.urlencoded': 'application/x-www-form-urlencoded',
};

/** The content type of a payload file, from its extension (`send` posts it so, `map` reads it so). */
export function contentTypeOf(file: string): string {
  const name = file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
  const dot = name.lastIndexOf('.');
  return (dot < 0 ? undefined : CONTENT_TYPES[name.slice(dot).toLowerCase()]) ?? 'application/json';
}

/** `--header name:value` items as lower-cased names to values; a malformed one is a usage error. */
export function parseHeaderOptions(items: readonly string[], usage: string): Record<string, string> {
  return parsePairs(items, ':', '--header name:value', usage, (name) => {
    const lower = name.toLowerCase();
    return /^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(lower) ? lower : undefined;
  });
}

/** `--query key=value` items as keys to values; a malformed one is a usage error. */
export function parseQueryOptions(items: readonly string[], usage: string): Record<string, string> {
  return parsePairs(items, '=', '--query key=value', usage, (key) => key);
}

function parsePairs(
  items: readonly string[],
  separator: string,
  form: string,
  usage: string,
  normalizeKey: (key: string) => string | undefined,
): Record<string, string> {
  // A null-prototype record: keys such as `__proto__` stay ordinary keys.
  const out: Record<string, string> = Object.create(null);
  for (const item of items) {
    const at = item.indexOf(separator);
    const key = at > 0 ? normalizeKey(item.slice(0, at).trim()) : undefined;
    if (key === undefined || key === '') throw new CliError(`"${item}" is not ${form} (${usage})`, 2);
    out[key] = item.slice(at + 1).trim();
  }
  return out;
}

/** The first line of an error's message (CLI output is one line per failure). */
export const firstLine = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
