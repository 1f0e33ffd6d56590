import { keyedListScheme } from './common/keyed-list-scheme';

/**
 * Paddle Billing: `Paddle-Signature: ts=<unix>;h1=<hex>`, HMAC-SHA256 over `${ts}:${raw body}`, one h1 per
 * active secret during a rotation; `ts` within the tolerance both ways (5 s by default, as Paddle's SDK).
 * The delivery id is the body's signed `event_id`.
 */
export const paddle = keyedListScheme({
  name: 'paddle',
  signature: { header: 'paddle-signature', display: 'Paddle-Signature' },
  separator: ';',
  keys: { timestamp: 'ts', signature: 'h1' },
  joiner: ':',
  toleranceSeconds: 5,
  // Paddle API keys pasted where a secret NAME belongs (secret keys are `pdl_ntfset_...`).
  secretValuePrefixes: ['pdl_ntfset_', 'pdl_live_apikey_', 'pdl_sdbx_apikey_'],
  deliveryId: { bodyField: 'event_id' },
  devSecret: (random) => `pdl_ntfset_dev_${random.toString('hex')}`,
});
