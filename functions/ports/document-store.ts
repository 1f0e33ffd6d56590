/** The port in front of the documents bucket: where generated files are copied to and read back from. */
import type { Readable } from 'node:stream';

/** One file to store: streamed, never whole in memory. */
export interface StoreFileRequest {
  readonly key: string;
  readonly body: Readable;
  /** Bytes the transport announced (Content-Length), when it did: a stream that ends short is refused. */
  readonly contentLength?: number;
  /** Bytes the service said the file has (checked when no Content-Length came). */
  readonly expectedSize?: number;
  readonly contentType: string;
  /** Object metadata (ASCII values; never a secret). */
  readonly metadata: Readonly<Record<string, string>>;
}

/** What was stored. */
export interface StoredFile {
  readonly bucket: string;
  readonly key: string;
  readonly size: number;
  /** SHA-256 (hex) of the bytes stored, computed while streaming. */
  readonly sha256: string;
}

/** Stores documents' files. */
export interface DocumentStore {
  /** The bucket (or its local stand-in) files land in. */
  readonly bucket: string;
  /** Streams one file in; no object is completed when the bytes do not add up. */
  put(request: StoreFileRequest): Promise<StoredFile>;
  /** Removes objects by key (the files of a dropped document); a key without an object is no error. */
  remove(keys: readonly string[]): Promise<void>;
  /** The keys under `prefix`, at most `limit` of them (a job's own prefix holds a handful). */
  list(prefix: string, limit: number): Promise<string[]>;
  /** A link to read a stored file for `expiresInSeconds`. */
  presign(bucket: string, key: string, expiresInSeconds: number): Promise<string>;
}
