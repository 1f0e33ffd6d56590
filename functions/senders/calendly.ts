import { keyedListScheme } from './common/keyed-list-scheme';

/**
 * Calendly: `Calendly-Webhook-Signature: t=<unix>,v1=<hex>` of HMAC-SHA256 over `${t}.${raw body}` with the
 * webhook signing key; `t` within the tolerance (three minutes, as Calendly's docs) both ways. Calendly
 * sends no delivery id: the body hash is the default id.
 */
export const calendly = keyedListScheme({
  name: 'calendly',
  signature: { header: 'calendly-webhook-signature', display: 'Calendly-Webhook-Signature' },
  separator: ',',
  keys: { timestamp: 't', signature: 'v1' },
  joiner: '.',
  toleranceSeconds: 180,
});
