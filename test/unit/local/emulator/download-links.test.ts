import { DownloadLinks, downloadUrl, filePrefix } from '../../../../local/emulator/download-links';

const file = (fileId: string, bytes = 10) => ({
  fileId,
  filename: `${fileId}.txt`,
  mimeType: 'text/plain',
  size: bytes,
  sha256: 'x',
  content: { kind: 'buffer' as const, data: Buffer.alloc(bytes, 97) },
});

describe('download links', () => {
  it('issue a 32-byte hex token and build a link under the emulator origin', () => {
    const links = new DownloadLinks();
    const stored = links.add(file('f1'), 1000);
    expect(stored.token).toMatch(/^[0-9a-f]{64}$/);
    expect(downloadUrl('http://127.0.0.1:1', 'f1', stored.token)).toBe(
      `http://127.0.0.1:1/download?version=1.0&fileId=f1&token=${stored.token}`,
    );
  });

  it('find a file only with its own token', () => {
    const links = new DownloadLinks();
    const stored = links.add(file('f1'), 1000);
    expect(links.find('f1', stored.token)?.fileId).toBe('f1');
    expect(links.find('f1', 'a'.repeat(64))).toBeUndefined();
    expect(links.find('f1', '')).toBeUndefined();
    expect(links.find('f2', stored.token)).toBeUndefined();
  });

  it('forget a file once its link expires', () => {
    let now = 1_000;
    const links = new DownloadLinks({ clock: () => now });
    const stored = links.add(file('f1'), 500);
    now = 1_499;
    expect(links.find('f1', stored.token)).toBeDefined();
    now = 1_500;
    expect(links.find('f1', stored.token)).toBeUndefined();
    expect(links.count).toBe(0);
    expect(links.bytesHeld).toBe(0);
  });

  it('forget the expired files at the old end when a file is added, and the rest at a sweep', () => {
    let now = 0;
    const links = new DownloadLinks({ clock: () => now });
    for (let i = 0; i < 1_000; i += 1) links.add(file(`old${i}`), 1_000);
    const longLived = links.add(file('long'), 60_000);
    const shortLived = links.add(file('short'), 1_000);
    now = 1_000;
    links.add(file('new'), 1_000);
    // The thousand expired files are gone; the one behind a live link stays until a sweep.
    expect(links.count).toBe(3);
    expect(links.bytesHeld).toBe(30);
    expect(links.find('short', shortLived.token)).toBeUndefined();
    links.add(file('short2'), 1);
    now = 1_001;
    links.sweep();
    expect(links.count).toBe(2);
    expect(links.find('long', longLived.token)).toBeDefined();
  });

  it('drop the oldest files past the memory bound', () => {
    const links = new DownloadLinks({ maxStoredBytes: 25 });
    const first = links.add(file('f1'), 1000);
    links.add(file('f2'), 1000);
    const third = links.add(file('f3'), 1000);
    expect(links.find('f1', first.token)).toBeUndefined();
    expect(links.find('f3', third.token)).toBeDefined();
    expect(links.bytesHeld).toBeLessThanOrEqual(25);
  });

  it('give the first bytes of a padded file without the whole', () => {
    const links = new DownloadLinks();
    const stored = links.add(
      { ...file('p1'), size: 5_000_000, content: { kind: 'padded', prefix: Buffer.from('head'), seed: 1 } },
      1000,
    );
    const part = filePrefix(stored, 10);
    expect(part.length).toBe(10);
    expect(part.subarray(0, 4).toString()).toBe('head');
  });
});
