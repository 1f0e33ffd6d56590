import { headerHmacScheme } from './common/header-hmac-scheme';

/**
 * Jira Cloud (admin webhooks created with a secret): `X-Hub-Signature: sha256=<hex HMAC-SHA256 of the raw
 * body>`; no timestamp. The delivery id is `X-Atlassian-Webhook-Identifier`, the same on every retry of one
 * delivery, and not signed.
 */
export const jira = headerHmacScheme({
  name: 'jira',
  signature: { header: 'x-hub-signature', display: 'X-Hub-Signature' },
  format: { algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=' },
  delivery: { header: 'x-atlassian-webhook-identifier', display: 'X-Atlassian-Webhook-Identifier' },
});
