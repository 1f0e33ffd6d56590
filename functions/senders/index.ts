import { VerifyConfigError } from './errors';
import { verifyGithub } from './github';
import { verifyHmacSha256 } from './hmac-sha256';
import { verifyNone } from './none';
import { verifyShopify } from './shopify';
import { verifySlack } from './slack';
import { verifyStandardWebhooks } from './standard-webhooks';
import { verifyStripe } from './stripe';
import { verifyToken } from './token';
import type { SchemeVerifier, VerifiedDelivery, VerifyInput, VerifyScheme } from './types';

export { SignatureError, type SignatureErrorCode, VerifyConfigError } from './errors';
export type { VerifiedDelivery, VerifyConfig, VerifyInput, VerifyScheme } from './types';

const verifiers: Readonly<Record<VerifyScheme, SchemeVerifier>> = {
  github: verifyGithub,
  stripe: verifyStripe,
  shopify: verifyShopify,
  slack: verifySlack,
  'standard-webhooks': verifyStandardWebhooks,
  'hmac-sha256': verifyHmacSha256,
  token: verifyToken,
  none: verifyNone,
};

/** Every scheme name verifyDelivery accepts. */
export const VERIFY_SCHEMES = Object.keys(verifiers) as readonly VerifyScheme[];

/**
 * Verifies one delivery over its raw bytes, synchronously; throws SignatureError (refuse with 401) or
 * VerifyConfigError (the integration is misconfigured).
 */
export function verifyDelivery(input: VerifyInput): VerifiedDelivery {
  const scheme: string = input.config.scheme;
  // hasOwn: a scheme named like an Object.prototype member must not resolve to one.
  const verifier = Object.hasOwn(verifiers, scheme) ? verifiers[scheme as VerifyScheme] : undefined;
  if (verifier === undefined) throw new VerifyConfigError('unknown verify scheme');
  return verifier(input);
}
