import { createHash } from 'node:crypto';
import {
  digestPadded,
  paddedChunks,
  paddedStream,
  syntheticChunkBytes,
} from '../../../../local/emulator/synthetic-bytes';

const collect = async (prefix: Buffer, total: number, seed: number): Promise<Buffer> => {
  const parts: Buffer[] = [];
  for await (const chunk of paddedStream(prefix, total, seed)) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
};

describe('synthetic padded files', () => {
  const prefix = Buffer.from('Title\n\nBody\n');
  const total = 2 * syntheticChunkBytes + 12_345;

  it('stream exactly the requested size, starting with the rendered prefix', async () => {
    const bytes = await collect(prefix, total, 1);
    expect(bytes.length).toBe(total);
    expect(bytes.subarray(0, prefix.length).equals(prefix)).toBe(true);
  });

  it('hash to the digest computed at creation', async () => {
    const bytes = await collect(prefix, total, 1);
    const digest = await digestPadded(prefix, total, 1);
    expect(digest).toEqual({ size: total, sha256: createHash('sha256').update(bytes).digest('hex') });
  });

  it('are deterministic per seed and differ between seeds and chunks', async () => {
    const a = await collect(prefix, total, 1);
    const b = await collect(prefix, total, 1);
    const c = await collect(prefix, total, 2);
    expect(a.equals(b)).toBe(true);
    expect(a.equals(c)).toBe(false);
    const chunks = [...paddedChunks(Buffer.alloc(0), 2 * syntheticChunkBytes, 3)];
    expect(chunks).toHaveLength(2);
    expect(chunks[0]?.equals(chunks[1] ?? Buffer.alloc(0))).toBe(false);
  });

  it('never cut a prefix longer than the requested size', async () => {
    expect((await collect(prefix, 4, 1)).equals(prefix)).toBe(true);
  });
});
