/**
 * The runtime of a Lambda container, built once from its environment: the configuration bundled beside the
 * code (validated at synth, so it cannot be broken here), Secrets Manager for secrets, the default AWS
 * endpoints.
 */
import { isAbsolute, join } from 'node:path';
import { createAwsClients } from '../adapters/aws-clients';
import { SecretsManagerSource } from '../adapters/secrets-manager/secret-source';
import { readLambdaSettings } from '../commons/env';
import { loadBundledConfigSync } from '../config/bundled';
import { createRuntime, type Runtime } from './runtime';

let cached: Runtime | undefined;

/** The container's runtime, created on first use. */
export function lambdaRuntime(): Runtime {
  if (cached !== undefined) return cached;
  const settings = readLambdaSettings();
  const configPath = isAbsolute(settings.configPath)
    ? settings.configPath
    : join(__dirname, settings.configPath);
  const config = loadBundledConfigSync(configPath);
  const secretsClient = createAwsClients().secretsManager;
  cached = createRuntime({
    config,
    aws: {},
    tableName: settings.tableName,
    queueUrl: settings.queueUrl,
    dlqUrl: settings.dlqUrl,
    bucket: settings.bucket,
    secrets: new SecretsManagerSource(secretsClient),
    sealingSecretName: settings.sealingSecretName,
    events: settings.eventBusName === undefined ? {} : { busName: settings.eventBusName },
    maxReceiveCount: settings.maxReceiveCount,
    leaseMs: settings.leaseSeconds * 1000,
  });
  return cached;
}
