/**
 * An S3 answered in process (no network): the SDK's real client with a request handler that keeps objects in
 * memory. Like S3, it decodes an `aws-chunked` body, refuses one whose trailing SHA-256 differs from the bytes
 * received (BadDigest), and answers the SHA-256 of what it keeps: the object's, or for a multipart upload the
 * hash of the parts' hashes. `corrupt` changes the bytes it keeps (each part's, for a multipart upload) after
 * the trailer check: a store that does not hold what was sent.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { S3Client } from '@aws-sdk/client-s3';

/** What the fake S3 was asked and holds. */
export interface FakeS3 {
  readonly client: S3Client;
  readonly objects: Map<string, Buffer>;
  /** Method and path (with query) of every request, in order. */
  readonly requests: string[];
}

/** How the fake S3 behaves. */
export interface FakeS3Options {
  /** The client's `requestChecksumCalculation`. @default WHEN_SUPPORTED */
  readonly checksums?: 'WHEN_SUPPORTED' | 'WHEN_REQUIRED';
  /** Changes the bytes kept (after the checksum checks). @default keeps them */
  readonly corrupt?: (bytes: Buffer) => Buffer;
  /** Answer `x-amz-checksum-sha256` when the request carried one. @default true */
  readonly answersChecksums?: boolean;
  /**
   * A single PUT's ETag: `md5` of the bytes kept (S3's, s3rver's, MinIO's for a plain PUT), or `opaque` (a
   * KMS-encrypted object's, which is not the MD5). @default opaque
   */
  readonly etag?: 'md5' | 'opaque';
}

interface HttpRequestLike {
  readonly method: string;
  readonly path: string;
  readonly query?: Record<string, string | string[] | null>;
  readonly headers: Record<string, string>;
  readonly body?: unknown;
}

const sha256 = (bytes: Buffer): Buffer => createHash('sha256').update(bytes).digest();

async function readBody(body: unknown): Promise<Buffer> {
  if (body === undefined || body === null) return Buffer.alloc(0);
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof Uint8Array) return Buffer.from(body);
  const chunks: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Buffer | string>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** Decodes `aws-chunked` (unsigned, with trailers): the data and the trailing headers. */
function decodeAwsChunked(encoded: Buffer): { data: Buffer; trailers: Record<string, string> } {
  const parts: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const end = encoded.indexOf('\r\n', offset);
    const size = Number.parseInt(encoded.subarray(offset, end).toString('latin1').split(';')[0] ?? '', 16);
    offset = end + 2;
    if (size === 0) break;
    parts.push(encoded.subarray(offset, offset + size));
    offset += size + 2;
  }
  const trailers: Record<string, string> = {};
  for (const line of encoded.subarray(offset).toString('latin1').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) trailers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { data: Buffer.concat(parts), trailers };
}

const answer = (statusCode: number, headers: Record<string, string> = {}, body = '') => ({
  response: { statusCode, headers, body: Readable.from([Buffer.from(body)]) },
});

/** A fake S3 and an SDK client pointed at it. */
export function fakeS3(options: FakeS3Options = {}): FakeS3 {
  const objects = new Map<string, Buffer>();
  const requests: string[] = [];
  const uploads = new Map<string, Map<number, Buffer>>();
  const keep = options.corrupt ?? ((bytes: Buffer) => bytes);
  const answersChecksums = options.answersChecksums ?? true;

  /** The body as S3 sees it: decoded, its trailing checksum verified. */
  const received = async (request: HttpRequestLike): Promise<{ data: Buffer; checksum?: string } | 'bad'> => {
    const raw = await readBody(request.body);
    if (!(request.headers['content-encoding'] ?? '').includes('aws-chunked')) {
      const header = request.headers['x-amz-checksum-sha256'];
      return header === undefined ? { data: raw } : { data: raw, checksum: header };
    }
    const { data, trailers } = decodeAwsChunked(raw);
    const checksum = trailers['x-amz-checksum-sha256'];
    if (checksum !== undefined && checksum !== sha256(data).toString('base64')) return 'bad';
    return checksum === undefined ? { data } : { data, checksum };
  };

  const handle = async (request: HttpRequestLike) => {
    const query = request.query ?? {};
    const search = new URLSearchParams(
      Object.entries(query).map(([name, value]): [string, string] => [name, String(value ?? '')]),
    ).toString();
    requests.push(`${request.method} ${request.path}${search === '' ? '' : `?${search}`}`);
    const key = decodeURIComponent(request.path.split('/').slice(2).join('/'));
    const uploadId = typeof query.uploadId === 'string' ? query.uploadId : undefined;
    if (request.method === 'HEAD') {
      const object = objects.get(key);
      return object === undefined
        ? answer(404)
        : answer(200, { 'content-length': String(object.length), etag: '"e"' });
    }
    if (request.method === 'POST' && 'uploads' in query) {
      uploads.set('u1', new Map());
      return answer(
        200,
        {},
        `<InitiateMultipartUploadResult><Bucket>b</Bucket><Key>${key}</Key><UploadId>u1</UploadId></InitiateMultipartUploadResult>`,
      );
    }
    if (request.method === 'PUT' && uploadId !== undefined) {
      const body = await received(request);
      if (body === 'bad') return answer(400, {}, '<Error><Code>BadDigest</Code></Error>');
      uploads.get(uploadId)?.set(Number(query.partNumber), keep(body.data));
      return answer(200, {
        etag: `"part${String(query.partNumber)}"`,
        ...(body.checksum !== undefined && answersChecksums
          ? { 'x-amz-checksum-sha256': body.checksum }
          : {}),
      });
    }
    if (request.method === 'POST' && uploadId !== undefined) {
      const parts = [...(uploads.get(uploadId) ?? new Map<number, Buffer>()).entries()]
        .sort(([a], [b]) => a - b)
        .map(([, data]) => data);
      objects.set(key, Buffer.concat(parts));
      uploads.delete(uploadId);
      const partHashes = parts.map((data) => sha256(data));
      const composite = `${sha256(Buffer.concat(partHashes)).toString('base64')}-${parts.length}`;
      return answer(
        200,
        {},
        `<CompleteMultipartUploadResult><Bucket>b</Bucket><Key>${key}</Key><ETag>"m"</ETag>${answersChecksums ? `<ChecksumSHA256>${composite}</ChecksumSHA256>` : ''}</CompleteMultipartUploadResult>`,
      );
    }
    if (request.method === 'DELETE') {
      uploads.delete(uploadId ?? '');
      return answer(204);
    }
    if (request.method === 'PUT') {
      const body = await received(request);
      if (body === 'bad') return answer(400, {}, '<Error><Code>BadDigest</Code></Error>');
      const stored = keep(body.data);
      objects.set(key, stored);
      return answer(200, {
        etag: options.etag === 'md5' ? `"${createHash('md5').update(stored).digest('hex')}"` : '"e"',
        ...(body.checksum !== undefined && answersChecksums
          ? { 'x-amz-checksum-sha256': sha256(stored).toString('base64') }
          : {}),
      });
    }
    return answer(400, {}, '<Error><Code>NotImplemented</Code></Error>');
  };

  const client = new S3Client({
    region: 'us-east-1',
    endpoint: 'http://s3.invalid',
    forcePathStyle: true,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    requestChecksumCalculation: options.checksums ?? 'WHEN_SUPPORTED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 1,
    requestHandler: { handle: (request: HttpRequestLike) => handle(request) } as never,
  });
  return { client, objects, requests };
}
