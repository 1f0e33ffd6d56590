/**
 * Secrets: the sealing secret (created unless given), and the secrets the configuration names (the service API
 * key and the webhook secrets), each given as an ISecret, imported by name, or created with a placeholder.
 */
import { type RemovalPolicy, Token } from 'aws-cdk-lib';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { CfnSecret, type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { DocrelayConfig } from '../../functions/config/schema';
import { acknowledge } from './nag';

/** Secret names the configuration reads at run time: the service API key and every webhook secret. */
export function configSecretNames(config: DocrelayConfig): {
  apiKey: string;
  webhook: Map<string, string[]>;
} {
  const webhook = new Map<string, string[]>();
  for (const integration of config.integrations) {
    const secret = integration.verify?.secret;
    webhook.set(integration.id, secret === undefined ? [] : Array.isArray(secret) ? [...secret] : [secret]);
  }
  return { apiKey: config.service.apiKeySecret, webhook };
}

/**
 * The ARN that matches a secret in a policy: a secret imported by name has only a partial ARN, and Secrets
 * Manager appends 6 random characters to every name, so the policy needs `-??????` (what Secret.grantRead does).
 */
export function secretPolicyArn(secret: ISecret): string {
  return secret.secretFullArn ?? `${secret.secretArn}-??????`;
}

/** Inputs of `buildSealingSecret`. */
export interface SealingSecretOptions {
  readonly given?: ISecret;
  readonly encryptionKey?: IKey;
  readonly removalPolicy: RemovalPolicy;
}

/** The given sealing secret, or a created one holding a generated random value. */
export function buildSealingSecret(scope: Construct, options: SealingSecretOptions): ISecret {
  if (options.given !== undefined) return options.given;
  const secret = new Secret(scope, 'SealingSecret', {
    description:
      'docrelay: key that seals webhook payloads and download links at rest (generated, never shown)',
    generateSecretString: { passwordLength: 64, excludePunctuation: true },
    ...(options.encryptionKey === undefined ? {} : { encryptionKey: options.encryptionKey }),
    // Sealed payloads in a retained table are unreadable without it.
    removalPolicy: options.removalPolicy,
  });
  acknowledge(
    secret,
    'AwsSolutions-SMG4',
    'Rotating the sealing key would make payloads and links sealed under the old value (jobs in flight) unreadable. It never leaves AWS; the construct grants it only to the functions that seal or unseal (ingest, worker, event-ingest), but it has no resource policy: any principal of the account whose IAM policy allows secretsmanager:GetSecretValue on it can read it too, such as an operator running docrelay console.',
  );
  return secret;
}

/** Inputs of `buildConfigSecrets`. */
export interface ConfigSecretsOptions {
  readonly config: DocrelayConfig;
  /** Create the secrets (with a placeholder) instead of importing them by name. */
  readonly create: boolean;
  /** Secrets given as constructs, by the name the config gives them; they win over `create` and imports. */
  readonly given?: Readonly<Record<string, ISecret>>;
  /** The Secrets Manager name of an imported or created secret (prefixed per deployment unless shared). */
  readonly physicalName: (logicalName: string) => string;
  readonly encryptionKey?: IKey;
  readonly removalPolicy: RemovalPolicy;
}

/** The config's secrets by the names the config gives them, and those created here. */
export interface ConfigSecrets {
  readonly byName: ReadonlyMap<string, ISecret>;
  /** The name the functions look each secret up by (Secrets Manager's name), by the config's name. */
  readonly physicalNames: ReadonlyMap<string, string>;
  readonly created: readonly Secret[];
  readonly apiKey: ISecret;
}

/** Imports (or creates) every secret the config names, under a `ConfigSecrets` scope. */
export function buildConfigSecrets(scope: Construct, options: ConfigSecretsOptions): ConfigSecrets {
  const names = configSecretNames(options.config);
  const created: Secret[] = [];
  const byName = new Map<string, ISecret>();
  const physicalNames = new Map<string, string>();
  const secretsScope = new Construct(scope, 'ConfigSecrets');
  const logicalNames = new Set([names.apiKey, ...[...names.webhook.values()].flat()]);
  for (const name of Object.keys(options.given ?? {})) {
    if (!logicalNames.has(name)) {
      throw new Error(
        `DocRelay: secrets.${name} is not a secret name the config uses (${[...logicalNames].join(', ')})`,
      );
    }
  }
  for (const name of logicalNames) {
    const id = encodeURIComponent(name);
    const given = options.given?.[name];
    if (given !== undefined) {
      // The bundled config names it for the functions, so its name must be known at synth.
      const physical = knownSecretName(given);
      if (physical === undefined) {
        throw new Error(
          `DocRelay: secrets.${name} must have a name known at synth (a secretName, or imported by name or ARN)`,
        );
      }
      byName.set(name, given);
      physicalNames.set(name, physical);
      continue;
    }
    // Prefixed per deployment, so two deployments in one account never read or write one secret; the bundled
    // config names it by this name, and the grants match it alone.
    const secretName = options.physicalName(name);
    if (!options.create) {
      byName.set(name, Secret.fromSecretNameV2(secretsScope, id, secretName));
      physicalNames.set(name, secretName);
      continue;
    }
    const secret = new Secret(secretsScope, id, {
      secretName,
      description: `docrelay: ${name === names.apiKey ? 'Document Generation Service API key' : 'webhook signing secret'}; replace the random placeholder with the real value`,
      // A random placeholder, never a guessable one: until it is set, nothing can sign a valid webhook.
      generateSecretString: { passwordLength: 48, excludePunctuation: true },
      ...(options.encryptionKey === undefined ? {} : { encryptionKey: options.encryptionKey }),
      removalPolicy: options.removalPolicy,
    });
    acknowledge(
      secret,
      'AwsSolutions-SMG4',
      'The value is issued by a third party (the Document Generation Service or the webhook sender), so Secrets Manager cannot rotate it; it is rotated with put-secret-value, and docrelay accepts several webhook secret names for an overlap (docs/deploy.md, "Key rotation").',
    );
    created.push(secret);
    byName.set(name, secret);
    physicalNames.set(name, secretName);
  }
  return { byName, physicalNames, created, apiKey: byName.get(names.apiKey)! };
}

/** A secret's name when known at synth: imported by name or ARN, or created in this app with a secretName. */
function knownSecretName(secret: ISecret): string | undefined {
  if (!Token.isUnresolved(secret.secretName)) return secret.secretName;
  const resource = secret.node.defaultChild;
  const name = resource instanceof CfnSecret ? resource.name : undefined;
  return name === undefined || Token.isUnresolved(name) ? undefined : name;
}

/** The config the functions run with: each secret named by the physical name they look it up by. */
export function runtimeConfig(
  config: DocrelayConfig,
  physicalNames: ReadonlyMap<string, string>,
): DocrelayConfig {
  const rename = (name: string): string => physicalNames.get(name) ?? name;
  return {
    ...config,
    service: { ...config.service, apiKeySecret: rename(config.service.apiKeySecret) },
    integrations: config.integrations.map((integration) => {
      const secret = integration.verify?.secret;
      if (integration.verify === undefined || secret === undefined) return integration;
      return {
        ...integration,
        verify: {
          ...integration.verify,
          secret: Array.isArray(secret) ? secret.map(rename) : rename(secret),
        },
      };
    }),
  } as DocrelayConfig;
}
