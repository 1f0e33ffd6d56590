/** smoke --stack: the Secrets Manager name of the signing secret, from the stack's SetSecret outputs. */
import { createdSecretName } from '../../../../bin/commands/smoke';

const outputs = {
  ApiUrl: 'https://abc.execute-api.eu-west-1.amazonaws.com',
  SetSecretDocrelayInternalNotesWebhook0:
    "aws secretsmanager put-secret-value --secret-id prod/docrelay/internal-notes-webhook --secret-string '<value>'",
  SetSecretDocrelayServiceApiKey1:
    "aws secretsmanager put-secret-value --secret-id prod/docrelay/service-api-key --secret-string '<value>'",
};

describe('createdSecretName', () => {
  it("takes the deployment's name of a secret the stack created", () => {
    expect(createdSecretName(outputs, 'docrelay/internal-notes-webhook')).toBe(
      'prod/docrelay/internal-notes-webhook',
    );
  });

  it("keeps the config's name of a secret the stack imports when the stack shares its secrets", () => {
    expect(createdSecretName(outputs, 'docrelay/github-webhook')).toBe('docrelay/github-webhook');
    expect(createdSecretName({ ...outputs, SecretPrefix: '(none)' }, 'notes-webhook')).toBe('notes-webhook');
  });

  it("puts the stack's SecretPrefix before an imported secret's config name", () => {
    expect(createdSecretName({ ...outputs, SecretPrefix: 'prod/' }, 'docrelay/github-webhook')).toBe(
      'prod/docrelay/github-webhook',
    );
  });
});
