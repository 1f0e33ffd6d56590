/**
 * Streams one file into S3: never whole in memory, SHA-256 and byte count computed on the way, and the copy
 * refused (no object completed) when the bytes do not add up to what was announced.
 *
 * When the length is known up front (the download's Content-Length) and fits one PUT, the bytes go through a
 * single streamed PutObject: nothing is buffered (a multipart upload holds `partSize × queueSize` in
 * memory) and it was 2-3x faster in bench/ (docs/benchmarks.md, "copy"). A stream that ends short or runs
 * over aborts the request, so no object is written. Unknown or larger lengths use a multipart upload.
 */
import { createHash } from 'node:crypto';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { DocrelayError } from '../../commons/errors';
import { CopySizeMismatchError, StorageWriteError } from './errors';

/** What to copy and where. */
export interface CopyRequest {
  readonly s3: S3Client;
  readonly bucket: string;
  readonly key: string;
  readonly body: Readable;
  /** Bytes the transport announced (Content-Length), when it did. */
  readonly contentLength?: number;
  /** Bytes the service said the file has. */
  readonly expectedSize?: number;
  readonly contentType: string;
  /** S3 user metadata (ASCII values). */
  readonly metadata: Record<string, string>;
  /** Multipart part size. @default 8 MiB */
  readonly partSize?: number;
  /** Parts uploaded at once. @default 4 */
  readonly queueSize?: number;
  /** Largest length sent as one streamed PUT; above it (or with no length known), multipart. @default 5 GiB */
  readonly singlePutMaxBytes?: number;
  readonly signal?: AbortSignal;
}

/** S3's limit for one PUT. */
export const MAX_SINGLE_PUT_BYTES = 5 * 1024 ** 3;

/** What was stored. */
export interface CopyResult {
  readonly size: number;
  readonly sha256: string;
}

/** Counts and hashes the bytes going through, and fails the stream when they overrun or fall short. */
class MeasuringStream extends Transform {
  readonly hash = createHash('sha256');
  bytes = 0;

  constructor(
    private readonly expected: number | undefined,
    private readonly what: string,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.expected !== undefined && this.bytes > this.expected) {
      callback(new CopySizeMismatchError(this.bytes, this.expected, this.what));
      return;
    }
    this.hash.update(chunk);
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    if (this.expected !== undefined && this.bytes !== this.expected) {
      callback(new CopySizeMismatchError(this.bytes, this.expected, this.what));
      return;
    }
    callback();
  }
}

/**
 * Copies a stream into S3 and returns its size and SHA-256. The transport's Content-Length is the authority
 * for truncation; the service's `size` is checked when no Content-Length came (its unit is not documented).
 */
export async function copyToS3(request: CopyRequest): Promise<CopyResult> {
  const expected = request.contentLength ?? request.expectedSize;
  const what = request.contentLength !== undefined ? 'the download' : 'the service';
  const measuring = new MeasuringStream(expected, what);
  let sourceError: unknown;
  request.body.once('error', (error) => {
    sourceError = error;
    measuring.destroy(error);
  });
  request.body.pipe(measuring);
  const singlePut =
    request.contentLength !== undefined &&
    request.contentLength <= (request.singlePutMaxBytes ?? MAX_SINGLE_PUT_BYTES);
  const params = {
    Bucket: request.bucket,
    Key: request.key,
    Body: measuring,
    ContentType: request.contentType,
    Metadata: request.metadata,
  };
  // A streamed PUT does not end on a source error by itself (the request waits for the announced bytes):
  // the measuring stream's error aborts it.
  const aborter = new AbortController();
  measuring.once('error', () => aborter.abort());
  const upload = singlePut
    ? undefined
    : new Upload({
        client: request.s3,
        params,
        partSize: request.partSize ?? 8 * 1024 * 1024,
        queueSize: request.queueSize ?? 4,
        leavePartsOnError: false,
      });
  const onAbort = (): void => {
    aborter.abort();
    void upload?.abort();
  };
  request.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    if (upload !== undefined) await upload.done();
    else {
      await request.s3.send(new PutObjectCommand({ ...params, ContentLength: request.contentLength }), {
        abortSignal: aborter.signal,
      });
    }
  } catch (error) {
    const cause = sourceError ?? measuring.errored ?? error;
    if (cause instanceof DocrelayError) throw cause;
    if (sourceError !== undefined) {
      throw new DocrelayError('DOWNLOAD_INTERRUPTED', 'the download stopped before the file was complete', {
        retryable: true,
        cause: sourceError,
      });
    }
    throw new StorageWriteError(request.key, error);
  } finally {
    request.signal?.removeEventListener('abort', onAbort);
    request.body.unpipe(measuring);
  }
  return { size: measuring.bytes, sha256: measuring.hash.digest('hex') };
}
