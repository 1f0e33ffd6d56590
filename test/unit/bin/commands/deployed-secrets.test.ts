/** The CLI reads a deployed stack's secrets under the stack's SecretPrefix output. */
import { prefixedSecrets, secretPrefixOf } from '../../../../bin/commands/deployed-secrets';
import { StaticSecretSource } from '../../../../functions/adapters/memory/secret-source';

describe('secretPrefixOf', () => {
  it('reads the SecretPrefix output, none for a stack that shares its secrets or predates the output', () => {
    expect(secretPrefixOf({ SecretPrefix: 'DocRelay-prod/' })).toBe('DocRelay-prod/');
    expect(secretPrefixOf({ SecretPrefix: '(none)' })).toBe('');
    expect(secretPrefixOf({})).toBe('');
  });
});

describe('prefixedSecrets', () => {
  it("reads the config's names under the prefix, and never the unprefixed secret of another deployment", async () => {
    const source = new StaticSecretSource({
      'docrelay/service-api-key': 'shared-value',
      'DocRelay-prod/docrelay/service-api-key': 'prod-value',
    });
    await expect(prefixedSecrets(source, 'DocRelay-prod/').get('docrelay/service-api-key')).resolves.toBe(
      'prod-value',
    );
    await expect(prefixedSecrets(source, '').get('docrelay/service-api-key')).resolves.toBe('shared-value');
  });
});
