import { headerHmacScheme } from './common/header-hmac-scheme';

/**
 * Bitbucket Cloud: `X-Hub-Signature: sha256=<hex HMAC-SHA256 of the raw body>` with the webhook's secret;
 * no timestamp. The delivery id is `X-Request-UUID` (the same on a redelivery), which is not signed.
 */
export const bitbucket = headerHmacScheme({
  name: 'bitbucket',
  signature: { header: 'x-hub-signature', display: 'X-Hub-Signature' },
  format: { algorithm: 'sha256', encoding: 'hex', prefix: 'sha256=' },
  delivery: { header: 'x-request-uuid', display: 'X-Request-UUID' },
});
