/**
 * Generated files behind temporary download links: a random token checked in constant time, expiring with
 * its link, which also forgets the file. Past `maxFiles` or `maxStoredBytes` the oldest files are dropped
 * (their links answer 404 as if expired); padded files hold only their rendered prefix.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Readable } from 'node:stream';
import { paddedChunks, paddedStream } from './synthetic-bytes';

/** A generated file's content: bytes in memory, or a rendered prefix padded on the fly to `size`. */
export type StoredContent =
  | { readonly kind: 'buffer'; readonly data: Buffer }
  | { readonly kind: 'padded'; readonly prefix: Buffer; readonly seed: number };

/** A generated file that can be downloaded until `expiresAt`. */
export interface StoredFile {
  readonly fileId: string;
  readonly filename: string;
  readonly mimeType: string;
  readonly size: number;
  readonly sha256: string;
  readonly content: StoredContent;
  readonly expiresAt: number;
  readonly token: string;
}

/** Limits of the file store. */
export interface DownloadLinkOptions {
  /** Milliseconds since the epoch. @default Date.now */
  readonly clock?: () => number;
  /** @default 256 MiB of file bytes held in memory */
  readonly maxStoredBytes?: number;
  /** @default 20 000 files */
  readonly maxFiles?: number;
}

/** The download URL of a file: `{baseUrl}/download?version=1.0&fileId=..&token=..`. */
export const downloadUrl = (baseUrl: string, fileId: string, token: string): string =>
  `${baseUrl}/download?version=1.0&fileId=${encodeURIComponent(fileId)}&token=${token}`;

const heldBytes = (content: StoredContent): number =>
  content.kind === 'buffer' ? content.data.length : content.prefix.length;

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/** Generated files by id, with their tokens and expiry. */
export class DownloadLinks {
  private readonly files = new Map<string, StoredFile>();
  private readonly clock: () => number;
  private readonly maxStoredBytes: number;
  private readonly maxFiles: number;
  private storedBytes = 0;

  constructor(options: DownloadLinkOptions = {}) {
    this.clock = options.clock ?? Date.now;
    this.maxStoredBytes = options.maxStoredBytes ?? 256 * 1024 * 1024;
    this.maxFiles = options.maxFiles ?? 20_000;
  }

  /** Stores a file for `ttlMs` and returns it with its new random token (32 bytes, hex). */
  add(file: Omit<StoredFile, 'token' | 'expiresAt'>, ttlMs: number): StoredFile {
    this.sweepOldest();
    const stored: StoredFile = {
      ...file,
      token: randomBytes(32).toString('hex'),
      expiresAt: this.clock() + ttlMs,
    };
    this.files.set(stored.fileId, stored);
    this.storedBytes += heldBytes(stored.content);
    for (const oldest of this.files.values()) {
      if (this.files.size <= this.maxFiles && this.storedBytes <= this.maxStoredBytes) break;
      if (oldest === stored) break;
      this.remove(oldest.fileId);
    }
    return stored;
  }

  /** The file when `token` is its token and its link has not expired; an expired file is removed. */
  find(fileId: string, token: string): StoredFile | undefined {
    const file = this.files.get(fileId);
    if (file === undefined) return undefined;
    if (this.clock() >= file.expiresAt) {
      this.remove(fileId);
      return undefined;
    }
    // Digests have equal lengths, so the comparison is constant-time whatever the token's length.
    return timingSafeEqual(digest(token), digest(file.token)) ? file : undefined;
  }

  /** Removes every file whose link has expired (the server calls it every 30 s). */
  sweep(): void {
    const now = this.clock();
    for (const file of this.files.values()) if (now >= file.expiresAt) this.remove(file.fileId);
  }

  /**
   * Removes the expired files at the old end, stopping at the first live one, so each add pays only for what
   * it removes. Links of one lifetime expire in insertion order; a shorter-lived file behind a longer-lived
   * one waits for sweep(), though its link answers as expired at once (find).
   */
  private sweepOldest(): void {
    const now = this.clock();
    for (const file of this.files.values()) {
      if (now < file.expiresAt) return;
      this.remove(file.fileId);
    }
  }

  /** Number of files held. */
  get count(): number {
    return this.files.size;
  }

  /** Bytes of file content held in memory. */
  get bytesHeld(): number {
    return this.storedBytes;
  }

  /** Forgets every file. */
  clear(): void {
    this.files.clear();
    this.storedBytes = 0;
  }

  private remove(fileId: string): void {
    const file = this.files.get(fileId);
    if (file === undefined) return;
    this.files.delete(fileId);
    this.storedBytes -= heldBytes(file.content);
  }
}

/** A stream of a stored file's bytes. */
export function fileStream(file: StoredFile): Readable {
  return file.content.kind === 'buffer'
    ? Readable.from([file.content.data], { objectMode: false })
    : paddedStream(file.content.prefix, file.size, file.content.seed);
}

/** The first `bytes` bytes of a stored file (for truncated downloads). */
export function filePrefix(file: StoredFile, bytes: number): Buffer {
  if (file.content.kind === 'buffer') return file.content.data.subarray(0, bytes);
  const prefix = file.content.prefix;
  if (bytes <= prefix.length) return prefix.subarray(0, bytes);
  const parts: Buffer[] = [];
  let length = 0;
  for (const chunk of paddedChunks(prefix, file.size, file.content.seed)) {
    parts.push(chunk);
    length += chunk.length;
    if (length >= bytes) break;
  }
  return Buffer.concat(parts).subarray(0, bytes);
}
