/**
 * Deterministic filler for large generated files: the rendered text followed by printable pseudo-random
 * lines up to the requested size. The bytes are produced chunk by chunk from a seed, never held whole, so a
 * 512 MB file costs one chunk of memory per stream; the same seed always gives the same bytes.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/** Size of the chunks the filler is produced in. */
export const syntheticChunkBytes = 1 << 20;

const baseBlocks = new Map<number, Buffer>();

// One chunk of hex lines derived from the seed; each chunk copies it and stamps its own index on it.
function baseBlock(seed: number): Buffer {
  const cached = baseBlocks.get(seed);
  if (cached !== undefined) return cached;
  const block = Buffer.alloc(syntheticChunkBytes);
  let digest = createHash('sha256').update(`docrelay-emulator:${seed}`).digest();
  for (let offset = 0; offset < block.length; offset += 64) {
    digest = createHash('sha256').update(digest).digest();
    block.write(`${digest.toString('hex').slice(0, 63)}\n`, offset, 'latin1');
  }
  if (baseBlocks.size > 16) baseBlocks.clear();
  baseBlocks.set(seed, block);
  return block;
}

/** The chunks of a file: `prefix`, then filler from `seed` up to `totalBytes` (never less than the prefix). */
export function* paddedChunks(prefix: Buffer, totalBytes: number, seed: number): Generator<Buffer> {
  if (prefix.length > 0) yield prefix;
  let remaining = Math.max(0, totalBytes - prefix.length);
  const base = baseBlock(seed);
  for (let index = 0; remaining > 0; index += 1) {
    const size = Math.min(remaining, syntheticChunkBytes);
    const chunk = Buffer.allocUnsafe(size);
    base.copy(chunk, 0, 0, size);
    // A line-shaped stamp makes every chunk differ, so a client that drops or repeats one is caught by sha256.
    chunk.write(`chunk ${String(index).padStart(12, '0')} `.slice(0, Math.min(size, 32)), 0, 'latin1');
    remaining -= size;
    yield chunk;
  }
}

/** Size and sha256 (hex) of a padded file, computed chunk by chunk, yielding to the event loop as it goes. */
export async function digestPadded(
  prefix: Buffer,
  totalBytes: number,
  seed: number,
): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  let sinceYield = 0;
  for (const chunk of paddedChunks(prefix, totalBytes, seed)) {
    hash.update(chunk);
    size += chunk.length;
    sinceYield += chunk.length;
    if (sinceYield >= 16 * syntheticChunkBytes) {
      sinceYield = 0;
      await yieldToEventLoop();
    }
  }
  return { sha256: hash.digest('hex'), size };
}

/** A byte stream of a padded file, with back-pressure. */
export const paddedStream = (prefix: Buffer, totalBytes: number, seed: number): Readable =>
  Readable.from(paddedChunks(prefix, totalBytes, seed), {
    objectMode: false,
    highWaterMark: 4 * syntheticChunkBytes,
  });
