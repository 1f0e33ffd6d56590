/** Secret values from AWS Secrets Manager, through Powertools Parameters' cache. */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { PutSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DocrelayError } from '../../commons/errors';
import { SecretNotFoundError, type SecretSource } from '../../ports/secret-source';

/** Reads secrets from Secrets Manager, cached for `maxAgeSeconds` (default 300). */
export class SecretsManagerSource implements SecretSource {
  private readonly provider: SecretsProvider;
  private readonly stale = new Set<string>();

  constructor(
    private readonly client: SecretsManagerClient,
    private readonly maxAgeSeconds = 300,
  ) {
    this.provider = new SecretsProvider({ awsSdkV3Client: client });
  }

  async get(name: string): Promise<string> {
    const forceFetch = this.stale.delete(name);
    let value: unknown;
    try {
      value = await this.provider.get(name, { maxAge: this.maxAgeSeconds, forceFetch });
    } catch (error) {
      throw new DocrelayError('SECRET_UNREADABLE', `secret "${name}" cannot be read from Secrets Manager`, {
        retryable: true,
        cause: error,
      });
    }
    if (typeof value !== 'string' || value === '') throw new SecretNotFoundError(name, 'Secrets Manager');
    return value;
  }

  refresh(name: string): void {
    this.stale.add(name);
  }

  /** Stores a new value (PutSecretValue; the construct grants it only where a sender hands one over). */
  async put(name: string, value: string): Promise<void> {
    try {
      await this.client.send(new PutSecretValueCommand({ SecretId: name, SecretString: value }));
    } catch (error) {
      throw new DocrelayError('SECRET_UNWRITABLE', `secret "${name}" cannot be written to Secrets Manager`, {
        retryable: true,
        cause: error,
      });
    }
    this.refresh(name);
  }
}
