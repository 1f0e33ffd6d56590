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

  it("keeps the config's name of a secret the stack imports (no SetSecret output names it)", () => {
    expect(createdSecretName(outputs, 'docrelay/github-webhook')).toBe('docrelay/github-webhook');
    expect(createdSecretName(outputs, 'notes-webhook')).toBe('notes-webhook');
  });
});
