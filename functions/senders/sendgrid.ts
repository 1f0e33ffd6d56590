import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  sign as signBytes,
  verify as verifyBytes,
} from 'node:crypto';
import { decodeBase64 } from './common/encoding';
import { SignatureError, SigningError, VerifyConfigError } from './common/errors';
import {
  assertWithinTolerance,
  parseUnixSeconds,
  requireHeader,
  requireSecrets,
  toleranceOf,
  toleranceOption,
} from './common/headers';
import { signingSecret, unixSeconds } from './common/signing';
import type { SenderScheme } from './types';

const SIGNATURE = 'x-twilio-email-event-webhook-signature';
const TIMESTAMP = 'x-twilio-email-event-webhook-timestamp';
const SIGNATURE_DISPLAY = 'X-Twilio-Email-Event-Webhook-Signature';
const TIMESTAMP_DISPLAY = 'X-Twilio-Email-Event-Webhook-Timestamp';
/** A DER ECDSA P-256 signature is at most 72 bytes; anything much longer is not one. */
const MAX_SIGNATURE_BYTES = 80;

/** The DER bytes of a key written as PEM or as the bare base64 SendGrid shows; undefined if neither. */
function keyBytes(secret: string): Buffer | undefined {
  const body = secret.replace(/-----(?:BEGIN|END) [A-Z ]+-----/g, '').replace(/\s+/g, '');
  return decodeBase64(body);
}

/** True for an elliptic-curve key on P-256, the only curve SendGrid signs with. */
const isP256 = (key: KeyObject): boolean =>
  key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';

/**
 * The key a secret holds: SendGrid's verification key (base64 SPKI, as the Mail Settings page shows it, or
 * PEM); a PKCS#8 private key (the local stack's development secret) is accepted too, and lets
 * `docrelay send` sign. Undefined when the secret is neither.
 */
function parseKey(secret: string): { publicKey: KeyObject; privateKey?: KeyObject } | undefined {
  const der = keyBytes(secret);
  if (der === undefined) return undefined;
  try {
    const publicKey = createPublicKey({ key: der, format: 'der', type: 'spki' });
    return isP256(publicKey) ? { publicKey } : undefined;
  } catch {
    // Not a public key: perhaps a private one.
  }
  try {
    const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    const publicKey = createPublicKey(privateKey);
    return isP256(publicKey) ? { publicKey, privateKey } : undefined;
  } catch {
    return undefined;
  }
}

/** ECDSA verification that answers false (never throws) for a signature OpenSSL cannot parse. */
function ecdsaVerifies(message: Buffer, key: KeyObject, signature: Buffer): boolean {
  try {
    return verifyBytes('sha256', message, { key, dsaEncoding: 'der' }, signature);
  } catch {
    return false;
  }
}

/**
 * SendGrid Event Webhook: `X-Twilio-Email-Event-Webhook-Signature`, base64 DER ECDSA P-256 over the
 * `...-Timestamp` header + raw body, checked with SendGrid's public keys; the timestamp within the tolerance
 * both ways. A batch carries no single id: the body hash is the default delivery id.
 */
export const sendgrid: SenderScheme<'sendgrid'> = {
  name: 'sendgrid',
  takesSecret: true,
  options: { toleranceSeconds: toleranceOption() },
  secretHeaders: [SIGNATURE],
  // SendGrid API keys pasted where a secret NAME belongs.
  secretValuePrefixes: ['SG.'],

  // A private key, so the local stack can sign what it verifies (the public key is derived from it).
  devSecret: () =>
    generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ format: 'der', type: 'pkcs8' })
      .toString('base64'),

  verify({ rawBody, headers, secrets, config, now }) {
    const keys = requireSecrets(secrets, 'sendgrid').map((secret, index) => {
      const key = parseKey(secret);
      if (key === undefined) {
        throw new VerifyConfigError(`sendgrid secret #${index + 1} is not an ECDSA P-256 public key`);
      }
      return key.publicKey;
    });
    const tolerance = toleranceOf(config.toleranceSeconds);
    const header = requireHeader(headers, SIGNATURE, SIGNATURE_DISPLAY);
    const timestamp = requireHeader(headers, TIMESTAMP, TIMESTAMP_DISPLAY);
    const seconds = parseUnixSeconds(timestamp, TIMESTAMP_DISPLAY);
    const signature = decodeBase64(header);
    if (signature === undefined || signature.length > MAX_SIGNATURE_BYTES) {
      throw new SignatureError(
        'SIGNATURE_MALFORMED',
        `${SIGNATURE_DISPLAY} header is not a base64 signature`,
      );
    }
    // ECDSA is one-shot in node:crypto: the timestamp and body are joined once.
    const message = Buffer.concat([Buffer.from(timestamp), rawBody]);
    if (!keys.some((key) => ecdsaVerifies(message, key, signature))) {
      throw new SignatureError('SIGNATURE_INVALID', `${SIGNATURE_DISPLAY} does not match the body`);
    }
    assertWithinTolerance(seconds, now, tolerance);
    return { scheme: 'sendgrid', timestamp: new Date(seconds * 1000) };
  },

  sign(input) {
    const privateKey = parseKey(signingSecret(input))?.privateKey;
    if (privateKey === undefined) {
      throw new SigningError(
        'this integration holds the SendGrid public key: send cannot sign without the private key (configure a PKCS#8 P-256 private key to test locally)',
      );
    }
    const t = unixSeconds(input.now);
    const message = Buffer.concat([Buffer.from(t), input.rawBody]);
    return {
      [SIGNATURE]: signBytes('sha256', message, { key: privateKey, dsaEncoding: 'der' }).toString('base64'),
      [TIMESTAMP]: t,
    };
  },
};
