/** The ingest's and the event ingest's dependencies: the job table and the jobs queue, nothing more. */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoJobRepository } from '../adapters/dynamodb/job-table';
import { SqsJobQueue } from '../adapters/sqs/job-queue';
import type { LoadedConfig } from '../config/compile';
import type { IngestDeps } from '../core/accept-delivery';
import type { SecretSource } from '../ports/secret-source';
import { type CertificateSource, snsCertificateSource } from '../senders/sns-certificates';
import { isSnsUrl } from '../senders/sns-hosts';

/** What the ingest is built from. */
export interface IngestParts {
  readonly config: LoadedConfig;
  readonly secrets: SecretSource;
  readonly dynamodb: DynamoDBDocumentClient;
  readonly sqs: SQSClient;
  readonly tableName: string;
  readonly queueUrl: string;
  readonly sealingSecretName: string;
  /** Confirms a subscription by fetching its URL (tests inject a loopback fake). @default fetchSubscription */
  readonly fetchSubscription?: (url: string) => Promise<{ status: number; body: string }>;
  /** Where SNS signing certificates come from. @default snsCertificateSource over fetchBounded */
  readonly certificates?: CertificateSource;
}

/** Builds what accepting a delivery needs (webhooks and EventBridge events alike). */
export function buildIngestDeps(parts: IngestParts): IngestDeps {
  const { secrets } = parts;
  return {
    config: parts.config,
    secrets,
    jobs: new DynamoJobRepository(parts.dynamodb, parts.tableName),
    queue: new SqsJobQueue(parts.sqs, parts.queueUrl),
    sealingSecretName: parts.sealingSecretName,
    certificates: parts.certificates ?? snsCertificateSource({ fetch: fetchBounded }),
    handshake: {
      fetch: parts.fetchSubscription ?? fetchSubscription,
      ...(secrets.put === undefined
        ? {}
        : { keepSecret: (name, value) => secrets.put?.(name, value) ?? Promise.resolve() }),
    },
  };
}

/** How long confirming a subscription may take: the sender waits for the answer. */
const SUBSCRIPTION_TIMEOUT_MS = 10_000;

/**
 * GETs a subscription URL a sender asked to be fetched (SNS `SubscribeURL`): https only, to an
 * `sns.<region>.amazonaws.com` host, no redirects followed, at most 64 KiB of the answer kept.
 */
export async function fetchSubscription(url: string): Promise<{ status: number; body: string }> {
  if (!isSnsUrl(url)) throw new Error('only https://sns.<region>.amazonaws.com(.cn) URLs are fetched');
  const response = await fetch(url, {
    redirect: 'error',
    signal: AbortSignal.timeout(SUBSCRIPTION_TIMEOUT_MS),
  });
  const body = (await readAtMost(response, ANSWER_LIMIT_BYTES)).toString('utf8');
  return { status: response.status, body };
}

/** GETs a certificate (the source checked the host first): no redirects, 10 s, at most 64 KiB kept. */
export async function fetchBounded(url: string): Promise<{ status: number; body: Buffer }> {
  const response = await fetch(url, {
    redirect: 'error',
    signal: AbortSignal.timeout(SUBSCRIPTION_TIMEOUT_MS),
  });
  return { status: response.status, body: await readAtMost(response, ANSWER_LIMIT_BYTES) };
}

/** How much of a fetched answer is kept: far more than a subscription answer or a certificate needs. */
const ANSWER_LIMIT_BYTES = 65_536;

/** The first `limit` bytes of an answer's body; the rest is never read (the stream is cancelled). */
export async function readAtMost(response: Response, limit: number): Promise<Buffer> {
  if (response.body === null) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = response.body.getReader();
  try {
    while (size < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(Buffer.from(value));
      size += value.length;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).subarray(0, limit);
}
