/**
 * The local stack's configuration reload: read the file again and, when it is valid, hand it to the workers and
 * the handlers; else keep the running one and say why. Also the check of the rules against the service's
 * templates (at start and on each reload) and the file watch behind `watchConfig`.
 */
import { watch } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { LoadedConfig } from '../../functions/config/compile';
import { ConfigError, type ConfigProblem } from '../../functions/config/errors';
import { loadConfigFile } from '../../functions/config/load';
import type { DocgenClient } from '../../functions/docgen/client';
import { checkConfigAgainstTemplates } from '../../functions/mapping/config-check';
import { displayPath, problemLines, warningLines } from './config-report';
import { ensureConfigSecrets } from './config-secrets';
import type { ReloadResult } from './local-stack-types';

/** What a reload reads and whom it tells. */
export interface ConfigReloaderOptions {
  readonly configPath: string;
  readonly secretsFile: string;
  readonly line: (text: string) => void;
  /** Hands the new config to the workers (rejects when they do not take it). */
  readonly useInWorkers: (loaded: LoadedConfig) => Promise<void>;
  /** Makes the handlers run the new config (once the workers have taken it). */
  readonly apply: (loaded: LoadedConfig) => void;
  /** Checks the new config's rules against the templates, telling what it finds. */
  readonly checkTemplates: (loaded: LoadedConfig) => Promise<ConfigProblem[]>;
}

/** Returns `reloadConfig`: one reload at a time; a change during one is read by the next. */
export function configReloader(options: ConfigReloaderOptions): () => Promise<ReloadResult> {
  const { line } = options;
  const reloadOnce = async (): Promise<ReloadResult> => {
    const source = displayPath(options.configPath, process.cwd());
    let loaded: LoadedConfig;
    try {
      loaded = await loadConfigFile(options.configPath);
    } catch (error) {
      const problems = error instanceof ConfigError ? error.problems : [];
      line(
        `config not reloaded, the running config stays: ${problems.length === 0 ? firstLineOf(error) : ''}`.trimEnd(),
      );
      for (const text of problemLines(source, problems)) line(text);
      return { reloaded: false, problems, ...(problems.length === 0 ? { error: firstLineOf(error) } : {}) };
    }
    await ensureConfigSecrets(options.secretsFile, loaded, line);
    try {
      await options.useInWorkers(loaded);
    } catch (error) {
      line(
        `config not reloaded, the running config stays: the workers did not take it: ${firstLineOf(error)}`,
      );
      return { reloaded: false, problems: [], error: firstLineOf(error) };
    }
    options.apply(loaded);
    line(`config reloaded from ${source}: ${describeConfig(loaded)}`);
    const warnings = await options.checkTemplates(loaded);
    return { reloaded: true, config: loaded, warnings };
  };
  let reloading: Promise<ReloadResult> | undefined;
  return () => {
    const next = (reloading ?? Promise.resolve()).then(reloadOnce, reloadOnce);
    reloading = next;
    return next;
  };
}

/** What the template check needs. */
export interface TemplateCheckOptions {
  readonly enabled: boolean;
  readonly configPath: string;
  readonly client: DocgenClient;
  readonly docgenUrl: string;
  readonly line: (text: string) => void;
}

/** Returns a check of a config's rules against the service's templates, told as warnings (none when disabled). */
export function templateChecker(
  options: TemplateCheckOptions,
): (loaded: LoadedConfig) => Promise<ConfigProblem[]> {
  return async (loaded) => {
    if (!options.enabled) return [];
    const source = displayPath(options.configPath, process.cwd());
    try {
      const report = await checkConfigAgainstTemplates(loaded, options.client);
      const warnings = [...report.problems, ...report.warnings];
      for (const text of warningLines(source, warnings)) options.line(text);
      return warnings;
    } catch (error) {
      options.line(
        `warning: mappings not checked against the templates at ${options.docgenUrl}: ${firstLineOf(error)}`,
      );
      return [];
    }
  };
}

/** `N integration(s), M rule(s)`. */
export function describeConfig(loaded: LoadedConfig): string {
  const integrations = [...loaded.integrations.values()];
  const rules = integrations.reduce((n, i) => n + i.rules.length, 0);
  return `${integrations.length} integration(s), ${rules} rule(s)`;
}

/** The first line of an error's message. */
export const firstLineOf = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';

/**
 * Calls `onChange` (debounced) when the file changes. Watches the folder, since editors often save by
 * writing a new file and renaming it over the old one. Returns the stop function.
 */
export function watchFile(path: string, onChange: () => void): () => Promise<void> {
  const name = basename(path);
  let timer: NodeJS.Timeout | undefined;
  const watcher = watch(dirname(path), (_event, changed) => {
    if (changed !== null && changed !== name) return;
    clearTimeout(timer);
    timer = setTimeout(onChange, 150);
  });
  watcher.on('error', () => undefined);
  return async () => {
    clearTimeout(timer);
    watcher.close();
  };
}
