/**
 * `docrelay check [--offline]`: validates the configuration and, unless offline, every rule against the live
 * templates. Prints every problem at once; exit 1 when there is any.
 */
import { parseArgs } from 'node:util';
import { readLocalSettings } from '../../functions/commons/env';
import type { LoadedConfig } from '../../functions/config/compile';
import { ConfigError, type ConfigProblem, formatConfigProblem } from '../../functions/config/errors';
import { loadConfigFile } from '../../functions/config/load';
import { checkConfigAgainstTemplates, configWarnings } from '../../functions/mapping/config-check';
import { connectDocgenClient } from '../../local/service-connection';
import { CliError, type CommandContext, type CommandRun } from './types';

const USAGE = 'usage: docrelay check [--offline]';

/** Loads the config (path from DOCRELAY_CONFIG) and checks it; resolves to the exit code. */
export const run: CommandRun = async (ctx) => {
  let offline: boolean;
  try {
    const parsed = parseArgs({
      args: ctx.argv,
      options: { offline: { type: 'boolean', default: false } },
      allowPositionals: false,
      strict: true,
    });
    offline = parsed.values.offline === true;
  } catch (error) {
    throw new CliError(`${error instanceof Error ? error.message : String(error)} (${USAGE})`, 2);
  }
  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const relative = displayPath(settings.configPath, ctx.cwd);

  let loaded: LoadedConfig;
  try {
    loaded = await loadConfigFile(settings.configPath);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    printProblems(ctx, relative, error.problems, []);
    return 1;
  }

  if (offline) {
    const warnings = configWarnings(loaded);
    printProblems(ctx, relative, [], warnings);
    ctx.stdout.write(`OK ${relative}: ${summary(loaded)} (offline: templates not checked)\n`);
    return 0;
  }

  const { client, connection } = await connectDocgenClient(settings, loaded.config.service);
  let report: Awaited<ReturnType<typeof checkConfigAgainstTemplates>>;
  try {
    report = await checkConfigAgainstTemplates(loaded, client);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new CliError(
      `cannot read templates from ${connection.baseUrl}: ${message.split('\n')[0]} (docrelay check --offline skips the service)`,
    );
  }
  printProblems(ctx, relative, report.problems, report.warnings);
  if (report.problems.length > 0) return 1;
  ctx.stdout.write(
    `OK ${relative}: ${summary(loaded)}, ${report.templatesChecked.length} template(s) checked at ${connection.baseUrl}\n`,
  );
  return 0;
};

function summary(loaded: LoadedConfig): string {
  const integrations = [...loaded.integrations.values()];
  const rules = integrations.reduce((n, i) => n + i.rules.length, 0);
  return `${integrations.length} integration(s), ${rules} rule(s)`;
}

function printProblems(
  ctx: CommandContext,
  source: string,
  problems: readonly ConfigProblem[],
  warnings: readonly ConfigProblem[],
): void {
  for (const warning of warnings) ctx.stderr.write(`warning: ${formatConfigProblem(warning, source)}\n`);
  if (problems.length === 0) return;
  ctx.stderr.write(`${source}: ${problems.length === 1 ? '1 problem' : `${problems.length} problems`}\n`);
  for (const problem of problems) ctx.stderr.write(`  - ${formatConfigProblem(problem, source)}\n`);
}

function displayPath(path: string, cwd: string): string {
  return path.startsWith(`${cwd}/`) ? path.slice(cwd.length + 1) : path;
}
