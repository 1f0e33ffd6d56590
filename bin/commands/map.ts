/**
 * `docrelay map <integrationId> --payload <file> [--header name:value]... [--query k=v]...`: prints the
 * documents a payload would become, as JSON. Reads templates, creates nothing.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readLocalSettings } from '../../functions/commons/env';
import type { LoadedConfig } from '../../functions/config/compile';
import { ConfigError, formatConfigProblem } from '../../functions/config/errors';
import { loadConfigFile } from '../../functions/config/load';
import { mapDelivery } from '../../functions/mapping/mapper';
import { createTemplateCache } from '../../functions/mapping/template-cache';
import { connectDocgenClient } from '../../local/service-connection';
import { CliError, type CommandRun } from './types';

const USAGE =
  'usage: docrelay map <integrationId> --payload <file> [--header name:value]... [--query key=value]...';

/** Maps the payload file with the integration's rules and prints `[ { rule, templateId, templateFileId, data } ]`. */
export const run: CommandRun = async (ctx) => {
  let values: { payload?: string; header?: string[]; query?: string[] };
  let positionals: string[];
  try {
    const parsed = parseArgs({
      args: ctx.argv,
      options: {
        payload: { type: 'string' },
        header: { type: 'string', multiple: true },
        query: { type: 'string', multiple: true },
      },
      allowPositionals: true,
      strict: true,
    });
    values = parsed.values;
    positionals = parsed.positionals;
  } catch (error) {
    throw new CliError(`${error instanceof Error ? error.message : String(error)} (${USAGE})`, 2);
  }
  const [integrationId, ...extra] = positionals;
  if (integrationId === undefined) throw new CliError(USAGE, 2);
  if (extra.length > 0) throw new CliError(`unexpected argument "${extra[0]}" (${USAGE})`, 2);
  if (values.payload === undefined) throw new CliError(`--payload <file> is required (${USAGE})`, 2);
  const headers = parsePairs(values.header ?? [], ':', '--header name:value', (name) => name.toLowerCase());
  const query = parsePairs(values.query ?? [], '=', '--query key=value', (name) => name);

  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const loaded = await loadConfigOrExplain(settings.configPath);
  const integration = loaded.integrations.get(integrationId);
  if (integration === undefined) {
    throw new CliError(
      `unknown integration "${integrationId}"; configured: ${[...loaded.integrations.keys()].join(', ')}`,
    );
  }
  const body = await readPayload(resolve(ctx.cwd, values.payload));
  const { client } = await connectDocgenClient(settings, loaded.config.service);
  const documents = await mapDelivery(
    integration,
    { body, headers, query, receivedAt: new Date().toISOString() },
    createTemplateCache(client),
  );
  ctx.stdout.write(`${JSON.stringify(documents, null, 2)}\n`);
  return 0;
};

async function loadConfigOrExplain(path: string): Promise<LoadedConfig> {
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

async function readPayload(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new CliError(
      `cannot read payload ${path}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CliError(
      `payload ${path} is not JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

function parsePairs(
  items: readonly string[],
  separator: string,
  form: string,
  normalizeKey: (key: string) => string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const at = item.indexOf(separator);
    const key = at > 0 ? item.slice(0, at).trim() : '';
    if (key === '') throw new CliError(`"${item}" is not ${form} (${USAGE})`, 2);
    Object.defineProperty(out, normalizeKey(key), {
      value: item.slice(at + 1).trim(),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
