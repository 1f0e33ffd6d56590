/**
 * A short-lived cache of template definitions: they change rarely, and every job would otherwise read its
 * template again. Promises are cached, so concurrent jobs share one read; failures are never cached.
 */
import type { Template } from '../docgen/types';
import type { TemplateSource } from './mapper';

/** Options of `createTemplateCache`. */
export interface TemplateCacheOptions {
  /** How long a template is reused, in milliseconds. @default 60000 */
  readonly ttlMs?: number;
  /** Most templates kept; the least recently used goes first. @default 100 */
  readonly maxEntries?: number;
  /** The clock (tests). @default Date.now */
  readonly now?: () => number;
}

/** Wraps a template source with a TTL cache (per id, bounded, failures evicted at once). */
export function createTemplateCache(
  source: TemplateSource,
  options: TemplateCacheOptions = {},
): TemplateSource {
  const ttlMs = options.ttlMs ?? 60_000;
  const maxEntries = Math.max(1, options.maxEntries ?? 100);
  const now = options.now ?? Date.now;
  const entries = new Map<string, { promise: Promise<Template>; expiresAt: number }>();

  return {
    getTemplate(id: string): Promise<Template> {
      const cached = entries.get(id);
      if (cached !== undefined && cached.expiresAt > now()) {
        // Re-insert to mark it most recently used (Map keeps insertion order).
        entries.delete(id);
        entries.set(id, cached);
        return cached.promise;
      }
      const promise = source.getTemplate(id);
      const entry = { promise, expiresAt: now() + ttlMs };
      entries.delete(id);
      entries.set(id, entry);
      while (entries.size > maxEntries) {
        const oldest = entries.keys().next().value;
        if (oldest === undefined) break;
        entries.delete(oldest);
      }
      promise.catch(() => {
        // Only evict this very read: a newer one may have replaced it meanwhile.
        if (entries.get(id) === entry) entries.delete(id);
      });
      return promise;
    },
  };
}
