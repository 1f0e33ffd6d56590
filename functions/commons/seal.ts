/**
 * Seals what the job table keeps but must never hold in clear (a delivery's payload, a document's links):
 * AES-256-GCM under an HKDF-SHA256 key per sealing secret, with the delivery or job as associated data, so
 * a seal opens only where it was made. Format and compression: docs/decisions.md, "Seal format".
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomFillSync } from 'node:crypto';
import { brotliCompressSync, brotliDecompressSync, constants, inflateRawSync } from 'node:zlib';

const VERSION = 'v2';
const COMPRESS_ABOVE = 1024;
/** The first plaintext byte: how the rest is compressed. */
const RAW = 0;
const DEFLATED = 1;
const BROTLI = 2;
/** GCM tag length. Node accepts shorter tags on decipher, and a 4-byte tag is forged in about 2^32 tries. */
const TAG_BYTES = 16;

const keys = new Map<string, Buffer>();

/** GCM's 96-bit IV, random for each seal. */
const IV_BYTES = 12;
/** Random IVs drawn 256 at a time: one call into the CSPRNG per 256 seals (as Node pools randomUUID). */
const ivPool = Buffer.alloc(IV_BYTES * 256);
let ivOffset = ivPool.length;

/** A fresh random IV, valid until the next call (the cipher copies it, the caller encodes it at once). */
function nextIv(): Buffer {
  if (ivOffset === ivPool.length) {
    randomFillSync(ivPool);
    ivOffset = 0;
  }
  const iv = ivPool.subarray(ivOffset, ivOffset + IV_BYTES);
  ivOffset += IV_BYTES;
  return iv;
}

/** The sealing key of a secret, derived once (a few secrets per process, so the cache stays tiny). */
function keyOf(secret: string): Buffer {
  let key = keys.get(secret);
  if (key === undefined) {
    key = Buffer.from(hkdfSync('sha256', secret, 'docrelay/seal', 'docrelay/seal/v2', 32));
    if (keys.size > 16) keys.clear();
    keys.set(secret, key);
  }
  return key;
}

/** Brotli's fastest setting, told the input's size so it sizes its window to it. */
const brotli = (plain: Uint8Array): Buffer =>
  brotliCompressSync(plain, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 0,
      [constants.BROTLI_PARAM_SIZE_HINT]: plain.length,
    },
  });

/** Encrypts bytes (given as parts, concatenated), bound to `context`. */
export function sealBytes(parts: readonly Uint8Array[], secret: string, context: string): string {
  const plain = parts.length === 1 ? (parts[0] as Uint8Array) : Buffer.concat(parts);
  const compress = plain.length > COMPRESS_ABOVE;
  const iv = nextIv();
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret), iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([
    cipher.update(Buffer.of(compress ? BROTLI : RAW)),
    cipher.update(compress ? brotli(plain) : plain),
    cipher.final(),
  ]);
  return [
    VERSION,
    iv.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
    body.toString('base64url'),
  ].join('.');
}

/** Opens sealed bytes; undefined when the seal does not open (another secret or context, or tampered). */
export function openBytes(sealed: string, secret: string, context: string): Buffer | undefined {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== VERSION || iv === undefined || tag === undefined || body === undefined) return undefined;
  const authTag = Buffer.from(tag, 'base64url');
  if (authTag.length !== TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(secret), Buffer.from(iv, 'base64url'), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(authTag);
    const plain = Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
    const data = plain.subarray(1);
    switch (plain[0]) {
      case RAW:
        return data;
      case BROTLI:
        return brotliDecompressSync(data);
      case DEFLATED:
        return inflateRawSync(data);
      default:
        return undefined;
    }
  } catch {
    return undefined;
  }
}

/** Seals a JSON-serialisable value, bound to `context`. */
export function sealJson(value: unknown, secret: string, context: string): string {
  return sealBytes([Buffer.from(JSON.stringify(value), 'utf8')], secret, context);
}

/** Opens a sealed JSON value; undefined when the seal does not open. */
export function openJson(sealed: string, secret: string, context: string): unknown {
  const bytes = openBytes(sealed, secret, context);
  if (bytes === undefined) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}
