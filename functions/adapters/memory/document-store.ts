/**
 * The document store in memory, for unit tests: the same checks as the S3 copy (the bytes must add up to what
 * was announced, or no object is kept), with the SHA-256 computed on the way.
 */
import { createHash } from 'node:crypto';
import type { DocumentStore, StoredFile, StoreFileRequest } from '../../ports/document-store';
import { CopySizeMismatchError } from '../s3/errors';

/** A stored object. */
export interface MemoryObject {
  readonly body: Buffer;
  readonly contentType: string;
  readonly metadata: Readonly<Record<string, string>>;
}

/** Objects in a map by key. */
export class InMemoryDocumentStore implements DocumentStore {
  readonly objects = new Map<string, MemoryObject>();
  private failures: unknown[] = [];

  constructor(readonly bucket = 'memory-bucket') {}

  /** Makes the next `times` puts throw `error` (after reading the body, as a failed upload would). */
  failNext(error: unknown, times = 1): void {
    for (let i = 0; i < times; i += 1) this.failures.push(error);
  }

  async put(request: StoreFileRequest): Promise<StoredFile> {
    const chunks: Buffer[] = [];
    for await (const chunk of request.body) chunks.push(Buffer.from(chunk as Uint8Array));
    const body = Buffer.concat(chunks);
    if (this.failures.length > 0) throw this.failures.shift();
    if (request.contentLength !== undefined && body.length !== request.contentLength) {
      throw new CopySizeMismatchError(body.length, request.contentLength, 'the download');
    }
    if (request.contentLength === undefined && request.expectedSize !== undefined) {
      if (body.length !== request.expectedSize) {
        throw new CopySizeMismatchError(body.length, request.expectedSize, 'the service');
      }
    }
    this.objects.set(request.key, {
      body,
      contentType: request.contentType,
      metadata: { ...request.metadata },
    });
    return {
      bucket: this.bucket,
      key: request.key,
      size: body.length,
      sha256: createHash('sha256').update(body).digest('hex'),
    };
  }

  async remove(keys: readonly string[]): Promise<void> {
    for (const key of keys) this.objects.delete(key);
  }

  async list(prefix: string, limit: number): Promise<string[]> {
    return [...this.objects.keys()]
      .filter((key) => key.startsWith(prefix))
      .sort()
      .slice(0, limit);
  }

  async presign(bucket: string, key: string, expiresInSeconds: number): Promise<string> {
    return `memory://${bucket}/${encodeURIComponent(key)}?expires=${expiresInSeconds}`;
  }
}
