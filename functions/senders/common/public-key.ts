import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { SigningError, VerifyConfigError } from './errors';

// DER prefix of an Ed25519 SubjectPublicKeyInfo: a raw 32-byte key appended makes a key Node can load.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const RAW_ED25519_HEX = /^[0-9a-fA-F]{64}$/;

/**
 * The public key in a configured secret: PEM (public key, certificate, or a private key, as the local
 * stack's development secrets are), or for Ed25519 the 64 hex digits senders such as Discord show.
 * A secret that is none of these is a configuration error; its value never enters the message.
 */
export function publicKeyOf(secret: string, scheme: string): KeyObject {
  const text = secret.trim();
  try {
    if (RAW_ED25519_HEX.test(text)) {
      return createPublicKey({
        key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(text, 'hex')]),
        format: 'der',
        type: 'spki',
      });
    }
    return createPublicKey(text);
  } catch {
    throw new VerifyConfigError(
      `verify scheme ${scheme}: the secret is not a public key (PEM${scheme === 'discord' ? ' or 64 hex digits' : ''})`,
    );
  }
}

/** The private key in a signing secret (`docrelay send` with a development key); a public key cannot sign. */
export function privateKeyOf(secret: string, scheme: string): KeyObject {
  try {
    return createPrivateKey(secret.trim());
  } catch {
    throw new SigningError(
      `verify scheme ${scheme} signs with the sender's private key: the configured secret holds only the public key`,
    );
  }
}
