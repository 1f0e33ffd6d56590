import { headerHmacScheme } from './common/header-hmac-scheme';

/**
 * Intercom: `X-Hub-Signature: sha1=<hex HMAC-SHA1 of the raw body>` keyed with the app's client secret;
 * no timestamp. The delivery id is the notification's `id` (`notif_...`), which the signature covers.
 */
export const intercom = headerHmacScheme({
  name: 'intercom',
  signature: { header: 'x-hub-signature', display: 'X-Hub-Signature' },
  format: { algorithm: 'sha1', encoding: 'hex', prefix: 'sha1=' },
  delivery: { bodyField: 'id' },
});
