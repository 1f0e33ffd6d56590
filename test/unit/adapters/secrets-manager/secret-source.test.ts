/** Secrets from Secrets Manager through Powertools' provider, against a client answered in process. */
import { type GetSecretValueCommandInput, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SecretsManagerSource } from '../../../../functions/adapters/secrets-manager/secret-source';
import { SecretNotFoundError } from '../../../../functions/ports/secret-source';
import { answerCommands, OFFLINE } from '../sdk-answers';

function setup(answer: (secretId: string) => object) {
  const client = new SecretsManagerClient(OFFLINE);
  const sent = answerCommands(client, (_name, input) =>
    answer(String((input as GetSecretValueCommandInput).SecretId)),
  );
  return { client, sent };
}

describe('SecretsManagerSource', () => {
  it('reads a secret once and serves it from the cache after', async () => {
    const { client, sent } = setup((id) => ({ SecretString: `value-of-${id}` }));
    const source = new SecretsManagerSource(client);
    await expect(source.get('docrelay/a')).resolves.toBe('value-of-docrelay/a');
    await expect(source.get('docrelay/a')).resolves.toBe('value-of-docrelay/a');
    expect(sent.map((s) => s.name)).toEqual(['GetSecretValue']);
  });

  it('reads a refreshed secret again (a rotation without a deploy), then caches it again', async () => {
    let version = 1;
    const { client, sent } = setup(() => ({ SecretString: `v${version}` }));
    const source = new SecretsManagerSource(client, 60);
    await expect(source.get('docrelay/a')).resolves.toBe('v1');
    version = 2;
    source.refresh('docrelay/a');
    await expect(source.get('docrelay/a')).resolves.toBe('v2');
    await expect(source.get('docrelay/a')).resolves.toBe('v2');
    expect(sent).toHaveLength(2);
  });

  it('says a secret without a string value is not set', async () => {
    const { client } = setup(() => ({}));
    const error = await new SecretsManagerSource(client).get('docrelay/empty').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SecretNotFoundError);
    expect((error as Error).message).toBe('secret "docrelay/empty" is not set in Secrets Manager');
  });

  it('fails retryably, naming the secret only, when Secrets Manager cannot be read', async () => {
    const { client } = setup(() => {
      throw new Error('AccessDeniedException');
    });
    const error = await new SecretsManagerSource(client).get('docrelay/a').catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'SECRET_UNREADABLE',
      retryable: true,
      message: 'secret "docrelay/a" cannot be read from Secrets Manager',
    });
  });
});
