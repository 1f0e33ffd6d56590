/**
 * The copy's stored-object check against the local S3 (s3rver, as `npm start` runs it): the local client
 * sends no checksums, so a plain PUT is proven by its ETag, the MD5 of the bytes streamed, with no HEAD; the
 * object holds exactly those bytes.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { createS3Client } from '../../functions/adapters/aws-clients';
import { copyToS3 } from '../../functions/adapters/s3/copy-file';
import { type AwsEmulators, LOCAL_CREDENTIALS, startAwsEmulators } from '../../local/stack/aws-emulators';

jest.setTimeout(60_000);

let dataDir: string;
let aws: AwsEmulators;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'docrelay-e2e-s3-copy-'));
  aws = await startAwsEmulators({ dataDir });
});

afterAll(async () => {
  await aws?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

it('proves a plain PUT by its ETag and makes no HEAD', async () => {
  const s3 = createS3Client({ region: aws.region, credentials: LOCAL_CREDENTIALS, endpoints: aws.endpoints });
  const commands: string[] = [];
  s3.middlewareStack.add(
    (next, context) => (args) => {
      commands.push(String(context.commandName));
      return next(args);
    },
    { step: 'initialize' },
  );
  try {
    const bytes = Buffer.alloc(150_000);
    for (let i = 0; i < bytes.length; i += 1) bytes[i] = (i * 7 + (i >> 9)) & 0xff;

    const result = await copyToS3({
      s3,
      bucket: aws.bucket,
      key: 'verify/a.docx',
      body: Readable.from([bytes.subarray(0, 70_000), bytes.subarray(70_000)]),
      contentLength: bytes.length,
      contentType: 'application/octet-stream',
      metadata: { 'job-id': 'job-1' },
    });

    expect(result).toEqual({
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      verifiedBy: 'md5',
    });
    expect(commands).toEqual(['PutObjectCommand']);
    const stored = await s3.send(new GetObjectCommand({ Bucket: aws.bucket, Key: 'verify/a.docx' }));
    const held = await stored.Body?.transformToByteArray();
    expect(Buffer.from(held ?? []).equals(bytes)).toBe(true);
  } finally {
    s3.destroy();
  }
});
