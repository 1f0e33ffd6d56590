/**
 * Streaming a file into S3 (and the S3 document store), against an S3 client answered in process: one
 * streamed PUT when the length is known, a multipart upload otherwise, and no object when the bytes do not
 * add up.
 */
import { createHash } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { S3Client } from '@aws-sdk/client-s3';
import { copyToS3 } from '../../../../functions/adapters/s3/copy-file';
import { S3DocumentStore } from '../../../../functions/adapters/s3/document-store';
import { CopySizeMismatchError, StorageWriteError } from '../../../../functions/adapters/s3/errors';
import { DocrelayError } from '../../../../functions/commons/errors';
import { answerCommands, OFFLINE } from '../sdk-answers';

const MiB = 1024 * 1024;

/** Reads a request body as S3 would (a stream, or bytes). */
async function drain(body: unknown): Promise<Buffer> {
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (typeof body === 'string') return Buffer.from(body);
  const chunks: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** A bucket whose objects and multipart uploads live in maps; `refuse` fails a command by name. */
function fakeBucket(refuse: Partial<Record<string, Error>> = {}) {
  const client = new S3Client(OFFLINE);
  const objects = new Map<string, Buffer>();
  const parts = new Map<number, Buffer>();
  const sent = answerCommands(client, async (name, input) => {
    const request = input as { Key?: string; Body?: unknown; PartNumber?: number };
    if (name === 'PutObject' || name === 'UploadPart') {
      // The body is read first, as the wire would, so a stream that fails fails the request.
      const bytes = await drain(request.Body);
      const refusal = refuse[name];
      if (refusal !== undefined) throw refusal;
      if (name === 'PutObject') objects.set(String(request.Key), bytes);
      else parts.set(Number(request.PartNumber), bytes);
      return { ETag: `"etag-${name}-${request.PartNumber ?? 1}"` };
    }
    const refusal = refuse[name];
    if (refusal !== undefined) throw refusal;
    if (name === 'CreateMultipartUpload') return { UploadId: 'upload-1' };
    if (name === 'CompleteMultipartUpload') {
      const ordered = [...parts.entries()].sort(([a], [b]) => a - b).map(([, bytes]) => bytes);
      objects.set(String(request.Key), Buffer.concat(ordered));
      return { ETag: '"etag-complete"' };
    }
    // The stored-object check: the size S3 holds (this client sends no checksums, as the local stack's).
    if (name === 'HeadObject') return { ContentLength: objects.get(String(request.Key))?.length };
    if (name === 'DeleteObject') objects.delete(String(request.Key));
    if (name === 'ListObjectsV2') {
      const { Prefix = '', MaxKeys = 1000 } = input as { Prefix?: string; MaxKeys?: number };
      const keys = [...objects.keys()].filter((key) => key.startsWith(Prefix)).sort();
      return {
        Contents: keys.slice(0, MaxKeys).map((Key) => ({ Key })),
        KeyCount: Math.min(keys.length, MaxKeys),
      };
    }
    return {};
  });
  return { client, objects, sent, names: () => sent.map((s) => s.name) };
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Deterministic bytes (no randomness in tests). */
function bytesOf(length: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i += 1) bytes[i] = (i * 31 + 7) % 256;
  return bytes;
}

const request = (client: S3Client, body: Readable) => ({
  s3: client,
  bucket: 'documents',
  key: 'notes/2026/invoice.pdf',
  body,
  contentType: 'application/pdf',
  metadata: { 'job-id': 'job-1' },
});

const failure = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );

describe('copyToS3 with a known length', () => {
  it('streams one PUT with the length, type and metadata, and returns the size and SHA-256', async () => {
    const bucket = fakeBucket();
    const bytes = bytesOf(10_000);
    const result = await copyToS3({
      ...request(bucket.client, Readable.from([bytes.subarray(0, 4000), bytes.subarray(4000)])),
      contentLength: bytes.length,
    });
    expect(result).toMatchObject({ size: bytes.length, sha256: sha256(bytes) });
    expect(bucket.names()).toEqual(['PutObject', 'HeadObject']);
    expect(bucket.sent[0]?.input).toMatchObject({
      Bucket: 'documents',
      Key: 'notes/2026/invoice.pdf',
      ContentLength: bytes.length,
      ContentType: 'application/pdf',
      Metadata: { 'job-id': 'job-1' },
    });
    expect(bucket.objects.get('notes/2026/invoice.pdf')).toEqual(bytes);
  });

  it('refuses a download that ends short of its Content-Length: no object is written', async () => {
    const bucket = fakeBucket();
    const error = await failure(
      copyToS3({ ...request(bucket.client, Readable.from([bytesOf(90)])), contentLength: 100 }),
    );
    expect(error).toBeInstanceOf(CopySizeMismatchError);
    expect(error).toMatchObject({
      retryable: true,
      message: 'received 90 bytes but the download announced 100',
    });
    expect(bucket.objects.size).toBe(0);
  });

  it('refuses a download that runs over its Content-Length', async () => {
    const bucket = fakeBucket();
    const error = await failure(
      copyToS3({ ...request(bucket.client, Readable.from([bytesOf(60), bytesOf(60)])), contentLength: 100 }),
    );
    expect(error).toBeInstanceOf(CopySizeMismatchError);
    expect((error as Error).message).toBe('received 120 bytes but the download announced 100');
    expect(bucket.objects.size).toBe(0);
  });

  it('says the download was interrupted when the source stream fails', async () => {
    const bucket = fakeBucket();
    const source = new PassThrough();
    const copying = failure(copyToS3({ ...request(bucket.client, source), contentLength: 100 }));
    source.write(bytesOf(10));
    source.destroy(new Error('ECONNRESET'));
    const error = await copying;
    expect(error).toMatchObject({ code: 'DOWNLOAD_INTERRUPTED', retryable: true });
    expect(((error as Error).cause as Error).message).toBe('ECONNRESET');
    expect(bucket.objects.size).toBe(0);
  });

  it('fails retryably, naming the key, when S3 refuses the PUT', async () => {
    const cause = new Error('SlowDown');
    const bucket = fakeBucket({ PutObject: cause });
    const error = await failure(
      copyToS3({ ...request(bucket.client, Readable.from([bytesOf(10)])), contentLength: 10 }),
    );
    expect(error).toBeInstanceOf(StorageWriteError);
    expect(error).toMatchObject({
      code: 'STORAGE_WRITE_FAILED',
      retryable: true,
      message: 'could not write s3 object notes/2026/invoice.pdf',
    });
    expect((error as Error).cause).toBe(cause);
  });
});

describe('copyToS3 with no length, or one above the single-PUT limit', () => {
  it('uploads a small file of unknown length through the upload manager and checks the service size', async () => {
    const bucket = fakeBucket();
    const bytes = bytesOf(300);
    const result = await copyToS3({ ...request(bucket.client, Readable.from([bytes])), expectedSize: 300 });
    expect(result).toMatchObject({ size: 300, sha256: sha256(bytes) });
    expect(bucket.objects.get('notes/2026/invoice.pdf')).toEqual(bytes);
  });

  it("refuses bytes that differ from the service's size when no Content-Length came", async () => {
    const bucket = fakeBucket();
    const error = await failure(
      copyToS3({ ...request(bucket.client, Readable.from([bytesOf(300)])), expectedSize: 301 }),
    );
    expect(error).toBeInstanceOf(CopySizeMismatchError);
    expect((error as Error).message).toBe('received 300 bytes but the service announced 301');
    expect(bucket.objects.size).toBe(0);
  });

  it('uploads a large file in parts and completes it, hashing every byte', async () => {
    const bucket = fakeBucket();
    const bytes = bytesOf(11 * MiB);
    const chunks = Array.from({ length: 11 }, (_, i) => bytes.subarray(i * MiB, (i + 1) * MiB));
    const result = await copyToS3({
      ...request(bucket.client, Readable.from(chunks)),
      contentLength: bytes.length,
      singlePutMaxBytes: 5 * MiB,
      partSize: 5 * MiB,
      queueSize: 1,
    });
    expect(result).toMatchObject({ size: bytes.length, sha256: sha256(bytes) });
    expect(bucket.names()).toEqual([
      'CreateMultipartUpload',
      'UploadPart',
      'UploadPart',
      'UploadPart',
      'CompleteMultipartUpload',
      'HeadObject',
    ]);
    expect(bucket.objects.get('notes/2026/invoice.pdf')?.equals(bytes)).toBe(true);
  });

  it('aborts the multipart upload when a part is refused, leaving no parts behind', async () => {
    const bucket = fakeBucket({ UploadPart: new Error('InternalError') });
    const bytes = bytesOf(11 * MiB);
    const error = await failure(
      copyToS3({
        ...request(bucket.client, Readable.from([bytes])),
        partSize: 5 * MiB,
        queueSize: 1,
      }),
    );
    expect(error).toBeInstanceOf(StorageWriteError);
    expect(bucket.names()).toContain('AbortMultipartUpload');
    expect(bucket.objects.size).toBe(0);
  });
});

describe('S3DocumentStore', () => {
  it('puts a file into its bucket and says where it landed, with its size and SHA-256', async () => {
    const bucket = fakeBucket();
    const store = new S3DocumentStore(bucket.client, 'documents', { partSize: 5 * MiB });
    const bytes = bytesOf(64);
    const stored = await store.put({
      key: 'a/b.txt',
      body: Readable.from([bytes]),
      contentLength: 64,
      expectedSize: 64,
      contentType: 'text/plain',
      metadata: { 'job-id': 'job-1' },
    });
    expect(stored).toEqual({ bucket: 'documents', key: 'a/b.txt', size: 64, sha256: sha256(bytes) });
    expect(bucket.sent[0]?.input).toMatchObject({
      Bucket: 'documents',
      Key: 'a/b.txt',
      ContentType: 'text/plain',
    });
  });

  it('takes the service size as the check when no Content-Length came', async () => {
    const bucket = fakeBucket();
    const store = new S3DocumentStore(bucket.client, 'documents');
    await expect(
      store.put({
        key: 'a/b.txt',
        body: Readable.from([bytesOf(10)]),
        expectedSize: 11,
        contentType: 'text/plain',
        metadata: {},
      }),
    ).rejects.toBeInstanceOf(DocrelayError);
  });

  it('removes objects by key from its own bucket, one DeleteObject each; a key without an object is fine', async () => {
    const bucket = fakeBucket();
    bucket.objects.set('a/1.txt', bytesOf(3));
    bucket.objects.set('a/2.txt', bytesOf(3));
    await new S3DocumentStore(bucket.client, 'documents').remove(['a/1.txt', 'a/missing.txt']);
    expect([...bucket.objects.keys()]).toEqual(['a/2.txt']);
    expect(bucket.sent.map((s) => [s.name, s.input])).toEqual([
      ['DeleteObject', { Bucket: 'documents', Key: 'a/1.txt' }],
      ['DeleteObject', { Bucket: 'documents', Key: 'a/missing.txt' }],
    ]);
  });

  it('lists the keys under a prefix, one page of at most the limit asked', async () => {
    const bucket = fakeBucket();
    for (const key of ['a/job-1/x.pdf', 'a/job-1/y.pdf', 'a/job-10/z.pdf', 'b/job-1/w.pdf'])
      bucket.objects.set(key, bytesOf(1));
    const store = new S3DocumentStore(bucket.client, 'documents');
    await expect(store.list('a/job-1/', 100)).resolves.toEqual(['a/job-1/x.pdf', 'a/job-1/y.pdf']);
    await expect(store.list('a/job-1', 2)).resolves.toEqual(['a/job-1/x.pdf', 'a/job-1/y.pdf']);
    expect(bucket.sent.at(-1)).toEqual({
      name: 'ListObjectsV2',
      input: { Bucket: 'documents', Prefix: 'a/job-1', MaxKeys: 2 },
    });
  });

  it('presigns a GET link that expires when asked, without calling S3', async () => {
    // A client with no answers: presigning is local, and a request would fail (no network in this tier).
    const client = new S3Client(OFFLINE);
    const sent = jest.spyOn(client, 'send');
    const url = new URL(
      await new S3DocumentStore(client, 'documents').presign('documents', 'a/b c.txt', 3600),
    );
    expect(url.hostname).toBe('documents.s3.eu-west-1.amazonaws.com');
    expect(url.pathname).toBe('/a/b%20c.txt');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('3600');
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(sent).not.toHaveBeenCalled();
  });
});
