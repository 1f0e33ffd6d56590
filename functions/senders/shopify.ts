import { anyHmacMatches } from './constant-time';
import { decodeBase64 } from './encoding';
import { SignatureError } from './errors';
import { readHeader, requireHeader, requireSecrets } from './headers';
import type { SchemeVerifier } from './types';

/** Shopify: `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the raw body>`; delivery id from X-Shopify-Webhook-Id. */
export const verifyShopify: SchemeVerifier = ({ rawBody, headers, secrets }) => {
  const keys = requireSecrets(secrets, 'shopify');
  const header = requireHeader(headers, 'x-shopify-hmac-sha256', 'X-Shopify-Hmac-Sha256');
  const signature = decodeBase64(header);
  if (signature?.length !== 32) {
    throw new SignatureError(
      'SIGNATURE_MALFORMED',
      'X-Shopify-Hmac-Sha256 header is not a base64 HMAC-SHA256',
    );
  }
  if (!anyHmacMatches(keys, [rawBody], [signature])) {
    throw new SignatureError('SIGNATURE_INVALID', 'X-Shopify-Hmac-Sha256 does not match the body');
  }
  return {
    scheme: 'shopify',
    deliveryId: readHeader(headers, 'x-shopify-webhook-id', 'X-Shopify-Webhook-Id'),
  };
};
