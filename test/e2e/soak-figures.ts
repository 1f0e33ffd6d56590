/**
 * Figures of the crash soak taken from the service's own record of the documents it made: whether a document
 * was made again while the previous one's links still lived, and how long a delivery waited for its first
 * document.
 */
import type { CreatedDocumentRecord } from '../../local/emulator/stats';

/** A document made for a title while the previous one's links still lived. */
export interface EarlyRegeneration {
  readonly title: string;
  readonly previousAt: number;
  readonly previousExpiresAt: number;
  readonly at: number;
}

/** The service's documents by the title the client sent, oldest first. */
export function documentsByTitle(
  documents: readonly CreatedDocumentRecord[],
): Map<string, CreatedDocumentRecord[]> {
  const byTitle = new Map<string, CreatedDocumentRecord[]>();
  for (const doc of documents) {
    if (doc.title === undefined) continue;
    byTitle.set(doc.title, [...(byTitle.get(doc.title) ?? []), doc]);
  }
  for (const list of byTitle.values()) list.sort((a, b) => a.createdAt - b.createdAt);
  return byTitle;
}

/** Every document made while the one before it, for the same title, still had live links. */
export function earlyRegenerations(
  byTitle: ReadonlyMap<string, readonly CreatedDocumentRecord[]>,
): EarlyRegeneration[] {
  const early: EarlyRegeneration[] = [];
  for (const [title, docs] of byTitle) {
    for (let i = 1; i < docs.length; i += 1) {
      const previous = docs[i - 1] as CreatedDocumentRecord;
      const doc = docs[i] as CreatedDocumentRecord;
      if (doc.createdAt < previous.linksExpireAt) {
        early.push({
          title,
          previousAt: previous.createdAt,
          previousExpiresAt: previous.linksExpireAt,
          at: doc.createdAt,
        });
      }
    }
  }
  return early;
}

/**
 * The longest wait, in seconds, from a delivery's first 2xx answer to its first document, over the deliveries
 * answered at or after `sinceMs` (a document made before the answer counts as no wait).
 */
export function longestFirstDocumentWait(
  answeredAt: ReadonlyMap<string, number>,
  byTitle: ReadonlyMap<string, readonly CreatedDocumentRecord[]>,
  sinceMs: number,
): number {
  let longest = 0;
  for (const [title, at] of answeredAt) {
    if (at < sinceMs) continue;
    const first = byTitle.get(title)?.[0];
    const wait = first === undefined ? Number.POSITIVE_INFINITY : Math.max(0, first.createdAt - at);
    longest = Math.max(longest, wait);
  }
  return Math.round(longest / 100) / 10;
}
