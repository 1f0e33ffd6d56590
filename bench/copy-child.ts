/**
 * One copy of the copy-to-S3 benchmark, in a fresh process so that its peak RSS is its own: either
 * docrelay's path (DocgenClient.download + copyToS3: multipart, SHA-256, size checks) or the raw baseline
 * (node:http GET piped into one PutObject with ContentLength, no checks). Samples RSS every 50 ms and prints
 * one JSON line: seconds, bytes, RSS before and at peak.
 */

import type { IncomingMessage } from 'node:http';
import { get } from 'node:http';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { copyToS3 } from '../functions/adapters/s3/copy-file';
import { DocgenClient, staticApiKey } from '../functions/docgen/client';

/** What the parent asks for. */
export interface CopyChildRequest {
  readonly mode: 'docrelay' | 'raw';
  readonly downloadUrl: string;
  readonly docgenUrl: string;
  readonly s3Endpoint: string;
  readonly bucket: string;
  readonly key: string;
  readonly size: number;
  readonly partSize?: number;
  readonly queueSize?: number;
}

/** What the child answers. */
export interface CopyChildResult {
  readonly seconds: number;
  readonly bytes: number;
  readonly rssBeforeBytes: number;
  readonly rssPeakBytes: number;
}

const open = (url: string): Promise<IncomingMessage> =>
  new Promise((resolveOpen, reject) => {
    get(url, (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        reject(new Error(`GET ${url}: ${response.statusCode}`));
        return;
      }
      resolveOpen(response);
    }).on('error', reject);
  });

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? '{}') as CopyChildRequest;
  const s3 = new S3Client({
    region: 'us-east-1',
    endpoint: request.s3Endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    // As the runtime configures its client for the local emulators.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const docgen = new DocgenClient({
    baseUrl: request.docgenUrl,
    apiKey: staticApiKey('unused-for-downloads'),
  });
  // A worker container copies many files: warm the transport (both paths download with node:http) with one
  // small request, so one-time start-up is not billed to the copy.
  (await open(`${request.docgenUrl}/_emulator/health`).catch(() => undefined))?.resume();
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let peak = rssBefore;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  const started = process.hrtime.bigint();
  let bytes: number;
  if (request.mode === 'docrelay') {
    const download = await docgen.download(request.downloadUrl);
    const result = await copyToS3({
      s3,
      bucket: request.bucket,
      key: request.key,
      body: download.body,
      ...(download.contentLength === undefined ? {} : { contentLength: download.contentLength }),
      expectedSize: request.size,
      contentType: download.contentType ?? 'application/octet-stream',
      metadata: { 'docrelay-bench': 'copy' },
      ...(request.partSize === undefined ? {} : { partSize: request.partSize }),
      ...(request.queueSize === undefined ? {} : { queueSize: request.queueSize }),
    });
    bytes = result.size;
  } else {
    const response = await open(request.downloadUrl);
    const length = Number(response.headers['content-length']);
    await s3.send(
      new PutObjectCommand({
        Bucket: request.bucket,
        Key: request.key,
        Body: response,
        ContentLength: length,
        ContentType: 'application/octet-stream',
      }),
    );
    bytes = length;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss, process.resourceUsage().maxRSS * 1024);
  s3.destroy();
  const answer: CopyChildResult = { seconds, bytes, rssBeforeBytes: rssBefore, rssPeakBytes: peak };
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
