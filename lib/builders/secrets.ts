/**
 * Secrets: the sealing secret (created unless given), and the secrets the configuration names (the service API
 * key and the webhook secrets), each given as an ISecret, imported by name, or created with a placeholder.
 */
import type { RemovalPolicy } from 'aws-cdk-lib';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
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
    'Rotating the sealing key would make payloads and links sealed under the old value (jobs in flight) unreadable; it never leaves AWS and is readable only by the docrelay functions that seal or unseal.',
  );
  return secret;
}

/** Inputs of `buildConfigSecrets`. */
export interface ConfigSecretsOptions {
  readonly config: DocrelayConfig;
  /** Create the secrets (with a placeholder) instead of importing them by name. */
  readonly create: boolean;
  readonly encryptionKey?: IKey;
  readonly removalPolicy: RemovalPolicy;
}

/** The config's secrets by the names the config gives them, and those created here. */
export interface ConfigSecrets {
  readonly byName: ReadonlyMap<string, ISecret>;
  readonly created: readonly Secret[];
  readonly apiKey: ISecret;
}

/** Imports (or creates) every secret the config names, under a `ConfigSecrets` scope. */
export function buildConfigSecrets(scope: Construct, options: ConfigSecretsOptions): ConfigSecrets {
  const names = configSecretNames(options.config);
  const created: Secret[] = [];
  const byName = new Map<string, ISecret>();
  const secretsScope = new Construct(scope, 'ConfigSecrets');
  for (const name of new Set([names.apiKey, ...[...names.webhook.values()].flat()])) {
    const id = encodeURIComponent(name);
    if (!options.create) {
      byName.set(name, Secret.fromSecretNameV2(secretsScope, id, name));
      continue;
    }
    const secret = new Secret(secretsScope, id, {
      // The runtime looks secrets up by the names in the config, so this physical name is the config's.
      secretName: name,
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
  }
  return { byName, created, apiKey: byName.get(names.apiKey)! };
}
