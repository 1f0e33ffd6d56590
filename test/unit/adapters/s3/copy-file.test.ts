import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { copyToS3, MD5_CHECK_MAX_BYTES } from '../../../../functions/adapters/s3/copy-file';
import { fakeS3 } from './fake-s3';

const KiB = 1024;
const MiB = 1024 * KiB;

/** Deterministic bytes (no randomness): `length` bytes of a repeating pattern, in 64 KiB chunks. */
function bytes(length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i += 1) out[i] = (i * 31 + (i >> 8)) & 0xff;
  return out;
}

const chunked = (data: Buffer): Readable =>
  Readable.from(
    Array.from({ length: Math.ceil(data.length / (64 * KiB)) }, (_, i) =>
      data.subarray(i * 64 * KiB, (i + 1) * 64 * KiB),
    ),
  );

const hex = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

const request = (s3: ReturnType<typeof fakeS3>['client'], data: Buffer, more: object = {}) => ({
  s3,
  bucket: 'documents',
  key: 'docs/a.docx',
  body: chunked(data),
  contentType: 'application/octet-stream',
  metadata: {},
  ...more,
});

describe('copyToS3 checks the stored object', () => {
  it('compares S3’s SHA-256 of a single streamed PUT with its own', async () => {
    const s3 = fakeS3();
    const data = bytes(300 * KiB);

    const result = await copyToS3(request(s3.client, data, { contentLength: data.length }));

    expect(result).toEqual({ size: data.length, sha256: hex(data), verifiedBy: 'sha256' });
    expect(s3.objects.get('docs/a.docx')?.equals(data)).toBe(true);
    expect(s3.requests).toEqual(['PUT /documents/docs/a.docx?x-id=PutObject']);
  });

  it('compares the checksum of the parts’ checksums of a multipart upload with its own', async () => {
    const s3 = fakeS3();
    const data = bytes(12 * MiB + 7);

    const result = await copyToS3(request(s3.client, data, { partSize: 5 * MiB }));

    expect(result).toEqual({ size: data.length, sha256: hex(data), verifiedBy: 'sha256' });
    expect(s3.objects.get('docs/a.docx')?.equals(data)).toBe(true);
    expect(s3.requests.filter((line) => line.includes('UploadPart'))).toHaveLength(3);
  });

  it('accepts a multipart upload of exactly whole parts, and one that fit a single part', async () => {
    const whole = fakeS3();
    const exact = bytes(10 * MiB);
    await expect(copyToS3(request(whole.client, exact, { partSize: 5 * MiB }))).resolves.toMatchObject({
      verifiedBy: 'sha256',
    });
    const small = fakeS3();
    const one = bytes(100 * KiB);
    await expect(copyToS3(request(small.client, one, { partSize: 5 * MiB }))).resolves.toMatchObject({
      size: one.length,
      verifiedBy: 'sha256',
    });
    expect(small.requests).toEqual(['PUT /documents/docs/a.docx?x-id=PutObject']);
  });

  it('fails the copy when the store holds other bytes than were sent (single PUT and multipart)', async () => {
    const flip = (stored: Buffer): Buffer => {
      const copy = Buffer.from(stored);
      copy[0] = (copy[0] ?? 0) ^ 1;
      return copy;
    };
    const single = fakeS3({ corrupt: flip });
    const data = bytes(6 * MiB);
    await expect(
      copyToS3(request(single.client, data, { contentLength: data.length })),
    ).rejects.toMatchObject({ code: 'STORED_OBJECT_MISMATCH', retryable: true });
    const multipart = fakeS3({ corrupt: flip });
    await expect(copyToS3(request(multipart.client, data, { partSize: 5 * MiB }))).rejects.toMatchObject({
      code: 'STORED_OBJECT_MISMATCH',
    });
  });

  it('reads the stored size back with a HEAD when the client sends no checksums', async () => {
    const s3 = fakeS3({ checksums: 'WHEN_REQUIRED' });
    const data = bytes(200 * KiB);

    const result = await copyToS3(request(s3.client, data, { contentLength: data.length }));

    expect(result).toEqual({ size: data.length, sha256: hex(data), verifiedBy: 'size' });
    expect(s3.requests).toEqual(['PUT /documents/docs/a.docx?x-id=PutObject', 'HEAD /documents/docs/a.docx']);
  });

  it('takes a plain PUT’s ETag for proof when it is the MD5 of the bytes sent, and makes no HEAD', async () => {
    const s3 = fakeS3({ checksums: 'WHEN_REQUIRED', etag: 'md5' });
    const data = bytes(200 * KiB);

    const result = await copyToS3(request(s3.client, data, { contentLength: data.length }));

    expect(result).toEqual({ size: data.length, sha256: hex(data), verifiedBy: 'md5' });
    expect(s3.requests).toEqual(['PUT /documents/docs/a.docx?x-id=PutObject']);
  });

  it('reads a larger file’s size back instead of hashing it twice', async () => {
    const s3 = fakeS3({ checksums: 'WHEN_REQUIRED', etag: 'md5' });
    const data = bytes(MD5_CHECK_MAX_BYTES + 1);

    const result = await copyToS3(request(s3.client, data, { contentLength: data.length }));

    expect(result.verifiedBy).toBe('size');
    expect(s3.requests).toEqual(['PUT /documents/docs/a.docx?x-id=PutObject', 'HEAD /documents/docs/a.docx']);
  });

  it('reads the size back when the ETag is not the MD5 of the bytes sent (another object, or KMS)', async () => {
    const flip = (stored: Buffer): Buffer => {
      const copy = Buffer.from(stored);
      copy[0] = (copy[0] ?? 0) ^ 1;
      return copy;
    };
    const s3 = fakeS3({ checksums: 'WHEN_REQUIRED', etag: 'md5', corrupt: flip });
    const data = bytes(20 * KiB);

    await expect(copyToS3(request(s3.client, data, { contentLength: data.length }))).resolves.toMatchObject({
      verifiedBy: 'size',
    });
    expect(s3.requests.at(-1)).toBe('HEAD /documents/docs/a.docx');

    const grown = fakeS3({
      checksums: 'WHEN_REQUIRED',
      etag: 'md5',
      corrupt: (stored) => Buffer.concat([Buffer.from('186a0\r\n'), stored]),
    });
    await expect(copyToS3(request(grown.client, data, { contentLength: data.length }))).rejects.toMatchObject(
      {
        code: 'STORED_OBJECT_MISMATCH',
      },
    );
  });

  it('fails the copy when the stored size differs from the bytes sent', async () => {
    // What s3rver does with an aws-chunked body it cannot decode: it keeps the encoding too.
    const s3 = fakeS3({
      checksums: 'WHEN_REQUIRED',
      corrupt: (stored) => Buffer.concat([Buffer.from('186a0\r\n'), stored]),
    });
    const data = bytes(100 * KiB);

    await expect(copyToS3(request(s3.client, data, { contentLength: data.length }))).rejects.toMatchObject({
      code: 'STORED_OBJECT_MISMATCH',
      message: expect.stringContaining(`${data.length + 7} stored, ${data.length} sent`),
    });
  });

  it('falls back to the HEAD when a store answers no checksum', async () => {
    const s3 = fakeS3({ answersChecksums: false });
    const data = bytes(50 * KiB);

    await expect(copyToS3(request(s3.client, data, { contentLength: data.length }))).resolves.toMatchObject({
      verifiedBy: 'size',
    });
    expect(s3.requests.at(-1)).toBe('HEAD /documents/docs/a.docx');
  });

  it('still refuses a download that ends short, before anything is checked', async () => {
    const s3 = fakeS3();
    const data = bytes(100 * KiB);

    await expect(
      copyToS3(request(s3.client, data, { contentLength: data.length + 10 })),
    ).rejects.toMatchObject({ code: 'COPY_SIZE_MISMATCH' });
    expect(s3.objects.size).toBe(0);
  });
});
