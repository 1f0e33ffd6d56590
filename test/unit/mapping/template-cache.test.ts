import type { Template } from '../../../functions/docgen/types';
import { createTemplateCache } from '../../../functions/mapping/template-cache';
import { invoiceTemplate } from './fixtures/templates';

function countingSource(fail: (id: string, call: number) => boolean = () => false) {
  const calls: string[] = [];
  return {
    calls,
    source: {
      async getTemplate(id: string): Promise<Template> {
        calls.push(id);
        if (fail(id, calls.length)) throw new Error(`read ${id} failed`);
        return { ...invoiceTemplate, id };
      },
    },
  };
}

describe('createTemplateCache', () => {
  it('reads each template once within the TTL, sharing concurrent reads', async () => {
    const { source, calls } = countingSource();
    const cache = createTemplateCache(source, { now: () => 0 });
    const [a, b] = await Promise.all([cache.getTemplate('1'), cache.getTemplate('1')]);
    await cache.getTemplate('1');
    expect(a).toBe(b);
    expect(calls).toEqual(['1']);
  });

  it('reads again after the TTL', async () => {
    let now = 0;
    const { source, calls } = countingSource();
    const cache = createTemplateCache(source, { ttlMs: 1000, now: () => now });
    await cache.getTemplate('1');
    now = 999;
    await cache.getTemplate('1');
    now = 1000;
    await cache.getTemplate('1');
    expect(calls).toEqual(['1', '1']);
  });

  it('never caches a failure', async () => {
    const { source, calls } = countingSource((_id, call) => call === 1);
    const cache = createTemplateCache(source, { now: () => 0 });
    await expect(cache.getTemplate('1')).rejects.toThrow('read 1 failed');
    await expect(cache.getTemplate('1')).resolves.toMatchObject({ id: '1' });
    expect(calls).toEqual(['1', '1']);
  });

  it('keeps at most maxEntries, dropping the least recently used', async () => {
    const { source, calls } = countingSource();
    const cache = createTemplateCache(source, { maxEntries: 2, now: () => 0 });
    await cache.getTemplate('1');
    await cache.getTemplate('2');
    await cache.getTemplate('1'); // 1 is now the most recent
    await cache.getTemplate('3'); // evicts 2
    await cache.getTemplate('1');
    await cache.getTemplate('2');
    expect(calls).toEqual(['1', '2', '3', '2']);
  });
});
