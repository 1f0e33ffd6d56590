/**
 * Loading the configuration bundled beside a Lambda function's code: JSON written by the CDK construct after
 * validating it at synth. Checked again against the same schema (a package could be edited by hand), but
 * read with JSON.parse: the YAML parser the CLI and the local stack need would only weigh on cold starts.
 */
import { readFileSync } from 'node:fs';
import { compileConfig, type LoadedConfig } from './compile';
import { ConfigError, ConfigFileError } from './errors';
import { DocrelayConfigSchema } from './schema';

/** Reads and validates the bundled JSON configuration, and compiles its expressions. */
export function loadBundledConfigSync(path: string): LoadedConfig {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigFileError(path, error);
  }
  const result = DocrelayConfigSchema.safeParse(data);
  if (!result.success) {
    throw new ConfigError(
      path,
      result.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
    );
  }
  return compileConfig(result.data, path);
}
