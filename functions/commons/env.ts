/**
 * The one module that reads environment variables. Everything else receives settings as arguments.
 * Local variables are those of product-spec.md; Lambda variables are set by the CDK construct.
 */
import { resolve } from 'node:path';

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
