/**
 * Loads the configuration bundled beside a Lambda function: the JSON the construct wrote after validating it
 * at synth with defaults filled (lib/builders/secrets.ts), trusted as such so the zod schema and YAML parser stay
 * off the Lambda path. Its shape is checked just enough for a clear error; expressions compile on first use.
 */
import { readFileSync } from 'node:fs';
import { compileConfig, type LoadedConfig } from './compile';
import { ConfigError, ConfigFileError } from './errors';
import type { DocrelayConfig } from './schema';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Reads the bundled JSON configuration (validated at synth); its expressions compile on first use. */
export function loadBundledConfigSync(path: string): LoadedConfig {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigFileError(path, error);
  }
  const problems: Array<{ path: string; message: string }> = [];
  if (!isRecord(data)) problems.push({ path: '', message: 'is not a configuration object' });
  else {
    const service = data.service;
    if (!isRecord(service) || typeof service.baseUrl !== 'string' || typeof service.apiKeySecret !== 'string')
      problems.push({ path: 'service', message: 'needs baseUrl and apiKeySecret' });
    if (!isRecord(data.storage) || typeof data.storage.keyPattern !== 'string')
      problems.push({ path: 'storage', message: 'needs keyPattern (the construct writes defaults filled)' });
    if (!Array.isArray(data.integrations) || !data.integrations.every(isRecord))
      problems.push({ path: 'integrations', message: 'must be a list of integrations' });
  }
  if (problems.length > 0) throw new ConfigError(path, problems);
  return compileConfig(data as unknown as DocrelayConfig, path, undefined, { lazy: true });
}
