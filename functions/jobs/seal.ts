/**
 * Seals values that must survive in the job table but never rest there in clear: a delivery's payload (so a
 * stranded or failed job can be sent again, see docs/architecture.md) and a document's download links (they
 * carry the service's temporary tokens; kept so a worker that died after the document was created copies the
 * files instead of generating a second document). AES-256-GCM, with a key derived (HKDF-SHA256) from the
 * sealing secret and bound to a context (the job or delivery), gzip-compressed first.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';

const VERSION = 'v1';

function deriveKey(secret: string, context: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, context, 'docrelay/seal/v1', 32));
}

/** Compresses and encrypts a JSON-serialisable value, bound to `context`. */
export function sealJson(value: unknown, secret: string, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', deriveKey(secret, context), iv);
  const plain = gzipSync(Buffer.from(JSON.stringify(value), 'utf8'), { level: 6 });
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return [
    VERSION,
    iv.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
    body.toString('base64url'),
  ].join('.');
}

/** Opens a sealed value; undefined when the seal does not open (another key or context, or tampered). */
export function openJson(sealed: string, secret: string, context: string): unknown {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== VERSION || iv === undefined || tag === undefined || body === undefined) return undefined;
  try {
    const decipher = createDecipheriv(
      'aes-256-gcm',
      deriveKey(secret, context),
      Buffer.from(iv, 'base64url'),
    );
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    const plain = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
    return JSON.parse(gunzipSync(plain).toString('utf8'));
  } catch {
    return undefined;
  }
}
