import { headerHmacScheme } from './common/header-hmac-scheme';

/**
 * Typeform: `Typeform-Signature: sha256=<base64 HMAC-SHA256 of the raw body>` with the webhook's secret;
 * no timestamp. The delivery id is the body's `event_id`, which the signature covers.
 */
export const typeform = headerHmacScheme({
  name: 'typeform',
  signature: { header: 'typeform-signature', display: 'Typeform-Signature' },
  format: { algorithm: 'sha256', encoding: 'base64', prefix: 'sha256=' },
  delivery: { bodyField: 'event_id' },
});
