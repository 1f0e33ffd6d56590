/**
 * The one module that reads environment variables. Everything else receives settings as arguments.
 * Local variables are those of product-spec.md; Lambda variables are set by the CDK construct.
 */
import { resolve } from 'node:path';
import { LAMBDA_ENV } from '../config/lambda-env';

type Env = Record<string, string | undefined>;

/** Settings of the local stack and the CLI (product-spec.md, "Local environment variables"). */
export interface LocalSettings {
  /** Port of the local HTTP API. @default 3000 */
  readonly port: number;
  /** Path of the YAML configuration. @default config/docrelay.yaml */
  readonly configPath: string;
  /** An external Document Generation Service instead of the embedded emulator. */
  readonly docgenBaseUrl?: string;
  /** Overrides the service key from the secrets file. */
  readonly docgenApiKey?: string;
  /** JSON file of secret name to value. @default <dataDir>/secrets.json */
  readonly secretsFile: string;
  /** Local S3, queue and table data. @default .docrelay/ */
  readonly dataDir: string;
}

const nonEmpty = (value: string | undefined): string | undefined =>
  value === undefined || value.trim() === '' ? undefined : value.trim();

/** Reads the local settings, with the defaults product-spec.md gives. */
export function readLocalSettings(env: Env = process.env, cwd: string = process.cwd()): LocalSettings {
  const portText = nonEmpty(env.PORT);
  const port = portText === undefined ? 3000 : Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be a port number (0-65535), got "${portText}"`);
  }
  const dataDir = resolve(cwd, nonEmpty(env.DOCRELAY_DATA_DIR) ?? '.docrelay');
  return {
    port,
    configPath: resolve(cwd, nonEmpty(env.DOCRELAY_CONFIG) ?? 'config/docrelay.yaml'),
    docgenBaseUrl: nonEmpty(env.DOCGEN_BASE_URL),
    docgenApiKey: nonEmpty(env.DOCGEN_API_KEY),
    secretsFile: resolve(cwd, nonEmpty(env.DOCRELAY_SECRETS_FILE) ?? resolve(dataDir, 'secrets.json')),
    dataDir,
  };
}

/** Settings of a Lambda function, set by the CDK construct (lib/docrelay.ts). */
export interface LambdaSettings {
  /** Path of the configuration file bundled with the function. */
  readonly configPath: string;
  readonly tableName: string;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly bucket: string;
  /** EventBridge bus for docrelay's events; the default bus when absent. */
  readonly eventBusName?: string;
  /** The deployment's name, in every event's detail; absent, events carry none. */
  readonly deployment?: string;
  /** Secret that seals payloads and links at rest. */
  readonly sealingSecretName: string;
  readonly maxReceiveCount: number;
  /** The jobs queue's visibility timeout, in seconds (a worker's lease). */
  readonly leaseSeconds: number;
  /** The deployment's metric namespace (two deployments in one account keep their metrics apart). */
  readonly metricsNamespace?: string;
  /** This function's service name in logs, metrics and traces. */
  readonly serviceName?: string;
  /** X-Ray tracing is on (the construct's `tracing`): the handler loads the Tracer. */
  readonly tracing: boolean;
}

/** Reads a Lambda function's settings; a missing one is a deployment error named in the message. */
export function readLambdaSettings(env: Env = process.env): LambdaSettings {
  const required = (key: keyof typeof LAMBDA_ENV): string => {
    const value = nonEmpty(env[LAMBDA_ENV[key]]);
    if (value === undefined) throw new Error(`environment variable ${LAMBDA_ENV[key]} is not set`);
    return value;
  };
  const optional = (key: keyof typeof LAMBDA_ENV): string | undefined => nonEmpty(env[LAMBDA_ENV[key]]);
  const positive = (key: keyof typeof LAMBDA_ENV, fallback: number): number => {
    const text = optional(key);
    const value = text === undefined ? fallback : Number(text);
    if (!Number.isInteger(value) || value <= 0)
      throw new Error(`${LAMBDA_ENV[key]} must be a positive integer`);
    return value;
  };
  return {
    configPath: optional('configPath') ?? 'docrelay.config.json',
    tableName: required('tableName'),
    queueUrl: required('queueUrl'),
    dlqUrl: required('dlqUrl'),
    bucket: required('bucket'),
    eventBusName: optional('eventBusName'),
    deployment: optional('deployment'),
    sealingSecretName: optional('sealingSecretName') ?? 'docrelay/sealing-key',
    maxReceiveCount: positive('maxReceiveCount', 8),
    leaseSeconds: positive('leaseSeconds', 900),
    metricsNamespace: optional('metricsNamespace'),
    serviceName: optional('serviceName'),
    tracing: optional('tracing') === 'true',
  };
}
