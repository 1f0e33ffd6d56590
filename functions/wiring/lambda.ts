/**
 * What every Lambda entry point starts from, once per container: its settings (environment variables set
 * by the construct), the configuration bundled beside the code (validated at synth), and Secrets Manager.
 */
import { isAbsolute, join } from 'node:path';
import { createSecretsManagerClient } from '../adapters/aws-clients';
import { SecretsManagerSource } from '../adapters/secrets-manager/secret-source';
import { type LambdaSettings, readLambdaSettings } from '../commons/env';
import { loadBundledConfigSync } from '../config/bundled';
import type { LoadedConfig } from '../config/compile';
import type { SecretSource } from '../ports/secret-source';

/** A Lambda container's starting point. */
export interface LambdaEnvironment {
  readonly settings: LambdaSettings;
  readonly config: LoadedConfig;
  readonly secrets: SecretSource;
}

/** Reads the container's settings, configuration and secrets source. */
export function lambdaEnvironment(): LambdaEnvironment {
  const settings = readLambdaSettings();
  const configPath = isAbsolute(settings.configPath)
    ? settings.configPath
    : join(__dirname, settings.configPath);
  return {
    settings,
    config: loadBundledConfigSync(configPath),
    secrets: new SecretsManagerSource(createSecretsManagerClient()),
  };
}
