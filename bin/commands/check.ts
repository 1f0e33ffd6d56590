/**
 * `docrelay check [--offline]`: validates the configuration and, unless offline, every rule against the live
 * templates. Prints every problem at once; exit 1 when there is any.
 */
import { readLocalSettings } from '../../functions/commons/env';
import type { LoadedConfig } from '../../functions/config/compile';
import { ConfigError, type ConfigProblem } from '../../functions/config/errors';
import { loadConfigFile } from '../../functions/config/load';
import { checkConfigAgainstTemplates, configWarnings } from '../../functions/mapping/config-check';
import { connectDocgenClient } from '../../local/service-connection';
import { displayPath, problemLines, warningLines } from '../../local/stack/config-report';
import { CliError, type CommandContext } from './types';

/** Loads the config (path from DOCRELAY_CONFIG) and checks it; resolves to the exit code. */
export async function check(ctx: CommandContext, options: { offline?: boolean }): Promise<number> {
  const offline = options.offline === true;
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
      `cannot read templates from ${connection.baseUrl}${connection.source === 'config' ? ` (service.baseUrl; no local stack or emulator runs for ${settings.dataDir})` : ''}: ${message.split('\n')[0]} (start npm start, or docrelay check --offline skips the service)`,
    );
  }
  printProblems(ctx, relative, report.problems, report.warnings);
  if (report.problems.length > 0) return 1;
  ctx.stdout.write(
    `OK ${relative}: ${summary(loaded)}, ${report.templatesChecked.length} template(s) checked at ${connection.baseUrl}\n`,
  );
  return 0;
}

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
  for (const text of [...warningLines(source, warnings), ...problemLines(source, problems)]) {
    ctx.stderr.write(`${text}\n`);
  }
}
