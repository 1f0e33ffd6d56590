/**
 * Lambda entry point of the ingest function: the handler, built once per container from only what the
 * ingest uses: the configuration, Secrets Manager, the job table and the queue. Not `lambdaRuntime()`: that
 * also builds the S3, EventBridge and service clients, which would be bundled and loaded on every cold start
 * for nothing (docs/benchmarks.md, "cold start": −20% bytes and load time).
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { createDynamoDbClient, createSecretsManagerClient, createSqsClient } from '../commons/aws-clients';
import { readLambdaSettings } from '../commons/env';
import { createObservability } from '../commons/observability';
import { SecretsManagerSource } from '../commons/secrets-manager-source';
import { compileConfig, type LoadedConfig } from '../config/compile';
import { ConfigError, ConfigFileError } from '../config/errors';
import { DocrelayConfigSchema } from '../config/schema';
import { JobStore } from '../jobs/job-store';
import { JobQueue } from '../queue/job-queue';
import { makeIngestHandler } from './make-handler';

/**
 * The configuration bundled beside the code: JSON written by the construct after validation at synth, so it
 * is read with JSON.parse and checked against the same schema, without the YAML parser the CLI needs.
 */
function loadBundledConfig(path: string): LoadedConfig {
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

const settings = readLambdaSettings();

export const handler = makeIngestHandler(
  {
    config: loadBundledConfig(
      isAbsolute(settings.configPath) ? settings.configPath : join(__dirname, settings.configPath),
    ),
    secrets: new SecretsManagerSource(createSecretsManagerClient()),
    jobs: new JobStore(createDynamoDbClient(), settings.tableName),
    queue: new JobQueue(createSqsClient(), settings.queueUrl),
    settings: { sealingSecretName: settings.sealingSecretName },
  },
  createObservability('ingest'),
);
