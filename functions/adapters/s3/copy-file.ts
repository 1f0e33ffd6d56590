/**
 * Streams one file into S3 without holding it in memory, hashing and counting on the way; a stream that
 * ends short or runs over aborts the upload, so no object is written. The stored copy is then checked
 * (`STORED_OBJECT_MISMATCH`); why each check and the single PUT: docs/decisions.md, "Copying to S3".
 */
import { createHash, type Hash } from 'node:crypto';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { DocrelayError } from '../../commons/errors';
import { CopySizeMismatchError, StorageWriteError, StoredObjectMismatchError } from './errors';

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

/**
 * Largest file whose ETag is compared with its MD5 when no checksum is sent (the local emulators): below it the
 * MD5 costs less than the HEAD it saves, above it more (bench/analysis.md, docs/decisions.md "Copying to S3").
 */
export const MD5_CHECK_MAX_BYTES = 8 * 1024 * 1024;

/** S3's limit for one PUT. */
export const MAX_SINGLE_PUT_BYTES = 5 * 1024 ** 3;

/** What was stored, and how the store's copy was checked. */
export interface CopyResult {
  readonly size: number;
  readonly sha256: string;
  /**
   * `sha256`: the store answered the SHA-256 of what it holds and it equals ours; `md5`: the single PUT's
   * ETag equals the MD5 of what was streamed; `size`: the store's object (a HEAD after the upload) has as
   * many bytes as were streamed.
   */
  readonly verifiedBy: 'sha256' | 'md5' | 'size';
}

/**
 * Counts and hashes the bytes going through, and fails the stream when they overrun or fall short. With a
 * part size it also hashes each part as lib-storage cuts them (every part `partSize` bytes but the last), for
 * the multipart upload's checksum of checksums.
 */
class MeasuringStream extends Transform {
  readonly hash = createHash('sha256');
  /** MD5 of the bytes, for comparing a plain PUT's ETag (only when asked: no checksum is sent). */
  readonly md5: Hash | undefined;
  bytes = 0;
  /** Raw SHA-256 of each complete part (multipart only). */
  readonly partDigests: Buffer[] = [];
  private partHash = createHash('sha256');
  private partBytes = 0;

  constructor(
    private readonly expected: number | undefined,
    private readonly what: string,
    private readonly partSize?: number,
    withMd5 = false,
  ) {
    super();
    this.md5 = withMd5 ? createHash('md5') : undefined;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.expected !== undefined && this.bytes > this.expected) {
      callback(new CopySizeMismatchError(this.bytes, this.expected, this.what));
      return;
    }
    this.hash.update(chunk);
    this.md5?.update(chunk);
    if (this.partSize !== undefined) this.hashParts(chunk, this.partSize);
    callback(null, chunk);
  }

  private hashParts(chunk: Buffer, partSize: number): void {
    let offset = 0;
    while (offset < chunk.length) {
      const take = Math.min(partSize - this.partBytes, chunk.length - offset);
      this.partHash.update(chunk.subarray(offset, offset + take));
      this.partBytes += take;
      offset += take;
      if (this.partBytes === partSize) {
        this.partDigests.push(this.partHash.digest());
        this.partHash = createHash('sha256');
        this.partBytes = 0;
      }
    }
  }

  /**
   * The SHA-256 S3 reports for what was streamed, base64: the object's own for one PUT (or a multipart
   * upload lib-storage sent as one PUT because it fit one part), the hash of the parts' hashes and `-N`
   * for a multipart upload of N parts.
   */
  expectedChecksums(): { single: string; composite?: string } {
    const single = this.hash.copy().digest('base64');
    if (this.partSize === undefined) return { single };
    const parts = [...this.partDigests];
    if (this.partBytes > 0 || parts.length === 0) parts.push(this.partHash.copy().digest());
    const composite = `${createHash('sha256').update(Buffer.concat(parts)).digest('base64')}-${parts.length}`;
    return { single, composite };
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
  const singlePut =
    request.contentLength !== undefined &&
    request.contentLength <= (request.singlePutMaxBytes ?? MAX_SINGLE_PUT_BYTES);
  const partSize = request.partSize ?? 8 * 1024 * 1024;
  // Read before the body is touched (a resolved provider: no event can arrive before the listener below).
  const sendsChecksum = (await request.s3.config.requestChecksumCalculation()) === 'WHEN_SUPPORTED';
  const checksEtag = singlePut && !sendsChecksum && (request.contentLength ?? 0) <= MD5_CHECK_MAX_BYTES;
  const measuring = new MeasuringStream(expected, what, singlePut ? undefined : partSize, checksEtag);
  let sourceError: unknown;
  request.body.once('error', (error) => {
    sourceError = error;
    measuring.destroy(error);
  });
  request.body.pipe(measuring);
  const params = {
    Bucket: request.bucket,
    Key: request.key,
    Body: measuring,
    ContentType: request.contentType,
    Metadata: request.metadata,
    // SHA-256 rather than the SDK's default CRC32: S3 then answers a hash we can compare with ours.
    ...(sendsChecksum ? { ChecksumAlgorithm: 'SHA256' as const } : {}),
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
        partSize,
        queueSize: request.queueSize ?? 4,
        leavePartsOnError: false,
      });
  const onAbort = (): void => {
    aborter.abort();
    void upload?.abort();
  };
  request.signal?.addEventListener('abort', onAbort, { once: true });
  let storedChecksum: string | undefined;
  let etag: string | undefined;
  try {
    if (upload !== undefined) storedChecksum = (await upload.done()).ChecksumSHA256;
    else {
      const put = await request.s3.send(
        new PutObjectCommand({ ...params, ContentLength: request.contentLength }),
        { abortSignal: aborter.signal },
      );
      storedChecksum = put.ChecksumSHA256;
      etag = put.ETag;
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
  const verifiedBy = await verifyStoredObject(request, measuring, storedChecksum, etag);
  return { size: measuring.bytes, sha256: measuring.hash.digest('hex'), verifiedBy };
}

/**
 * Compares the store's copy with what was streamed: its SHA-256 when it answered one, else the ETag when it is
 * our MD5, else its size.
 */
async function verifyStoredObject(
  request: CopyRequest,
  measuring: MeasuringStream,
  storedChecksum: string | undefined,
  etag: string | undefined,
): Promise<CopyResult['verifiedBy']> {
  if (storedChecksum !== undefined) {
    const expected = measuring.expectedChecksums();
    if (storedChecksum !== expected.single && storedChecksum !== expected.composite) {
      throw new StoredObjectMismatchError(request.key, 'SHA-256');
    }
    return 'sha256';
  }
  if (measuring.md5 !== undefined && etag !== undefined && unquote(etag) === measuring.md5.digest('hex'))
    return 'md5';
  let stored: number | undefined;
  try {
    const head = await request.s3.send(new HeadObjectCommand({ Bucket: request.bucket, Key: request.key }), {
      ...(request.signal === undefined ? {} : { abortSignal: request.signal }),
    });
    stored = head.ContentLength;
  } catch (error) {
    throw new StorageWriteError(request.key, error);
  }
  if (stored !== measuring.bytes) {
    throw new StoredObjectMismatchError(request.key, `size (${stored} stored, ${measuring.bytes} sent)`);
  }
  return 'size';
}

/** An ETag without its quotes (S3 answers `"<hex>"`). */
const unquote = (etag: string): string => etag.replace(/^"(.*)"$/, '$1').toLowerCase();
