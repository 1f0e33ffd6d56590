/**
 * Probes the reliability tests share: a webhook builder for internal notes (one job each), the final state
 * of a set of jobs read straight from the job table, the objects in the local bucket, the open index, the
 * queue drained, and a switch that makes the runtime's SQS client refuse to send (the queue unavailable).
 */
import { randomUUID } from 'node:crypto';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { JobRecord } from '../../../functions/core/job';
import type { EmulatorStats } from '../../../local/emulator/server';
import { waitForJobs } from './settle';
import { type Answer, type HookBody, sha256, type TestStack } from './stack';
import { signStandardWebhooks } from './webhooks';

/** Posts an internal note (template 9003, one job) with its own webhook id, signed as Standard Webhooks. */
export async function postNote(
  t: Pick<TestStack, 'secret' | 'post'>,
  data: Record<string, unknown>,
  webhookId: string = `msg_${randomUUID()}`,
): Promise<Answer<HookBody>> {
  const body = Buffer.from(JSON.stringify({ type: 'note.created', data }));
  const secret = await t.secret('docrelay/internal-notes-webhook');
  return t.post('internal-notes', body, signStandardWebhooks(body, secret, webhookId));
}

/** The job records (not the API view: they carry documentsRequested), read from the table. */
export async function jobRecords(t: TestStack, jobIds: readonly string[]): Promise<JobRecord[]> {
  const records: JobRecord[] = [];
  // Sequential in small groups: dynalite is single-threaded, and the workers share it.
  for (let i = 0; i < jobIds.length; i += 20) {
    const group = await Promise.all(jobIds.slice(i, i + 20).map((id) => t.stack.jobs.getJob(id)));
    for (const [j, record] of group.entries()) {
      if (record === undefined) throw new Error(`job ${jobIds[i + j]} is not in the table`);
      records.push(record);
    }
  }
  return records;
}

/** Waits until every job is stored or failed (read from the table), and returns the records. */
export function waitForFinal(
  t: TestStack,
  jobIds: readonly string[],
  timeoutMs: number,
): Promise<JobRecord[]> {
  return waitForJobs((jobId) => t.stack.jobs.getJob(jobId), jobIds, {
    timeoutMs,
    intervalMs: 500,
    // What a job left open shows, with the stack's last lines about it: enough to tell a lost message, a
    // hung attempt and a job waiting out a backoff apart from the failure alone.
    describe: (jobs) => {
      const open = jobs
        .filter(
          (job): job is JobRecord => job !== undefined && job.status !== 'stored' && job.status !== 'failed',
        )
        .slice(0, 10);
      const lines = open.flatMap((job) =>
        t.lines
          .filter((line) => line.includes(job.jobId))
          .slice(-5)
          .map((line) => line.slice(0, 400)),
      );
      return `${JSON.stringify(
        open.map((job) => ({
          jobId: job.jobId,
          status: job.status,
          attempts: job.attempts,
          e: job.lastError,
          leaseOwner: job.leaseOwner,
          leaseInMs: job.leaseUntil === undefined ? undefined : job.leaseUntil - Date.now(),
        })),
      )}${lines.length === 0 ? '' : `; their last lines:\n${lines.join('\n')}`}`;
    },
  });
}

/** Every object key in a bucket (bounded: 100 pages of 1000). */
export async function listKeys(s3: S3Client, bucket: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  for (let page = 0; page < 100; page += 1) {
    const result = await s3.send(
      new ListObjectsV2Command({
        Bucket: bucket,
        ...(token === undefined ? {} : { ContinuationToken: token }),
      }),
    );
    for (const object of result.Contents ?? []) if (object.Key !== undefined) keys.push(object.Key);
    token = result.IsTruncated === true ? result.NextContinuationToken : undefined;
    if (token === undefined) break;
  }
  return keys;
}

export { waitForQueueDrained } from './settle';

/** Download requests the service answered 404: links that had expired (each forces one regeneration). */
export const expiredDownloads = (stats: EmulatorStats): number =>
  stats.requests.filter((request) => request.path === '/download' && request.status === 404).length;

/** Requests answered with an injected fault of this kind. */
export const faultCount = (stats: EmulatorStats, fault: string): number =>
  stats.requests.filter((request) => request.fault === fault).length;

/**
 * Checks stored jobs against what the service generated and what the bucket holds: each stored job's
 * document is one the service made, every file's object exists with the service's SHA-256 and size, and the
 * bucket holds nothing else (with `wholeBucket: false`, nothing else under these jobs' keys). Returns the problems found (empty when all is well), so a test can show them all.
 */
export async function storedProblems(
  t: TestStack,
  stats: EmulatorStats,
  stored: readonly JobRecord[],
  options: { wholeBucket?: boolean } = {},
): Promise<string[]> {
  const problems: string[] = [];
  const documents = new Map(stats.createdDocuments.map((doc) => [doc.documentId, doc]));
  const expectedKeys = new Set<string>();
  for (const job of stored) {
    const served = documents.get(job.document?.id ?? '');
    if (served === undefined) {
      problems.push(`job ${job.jobId}: document ${job.document?.id} was not made by the service`);
      continue;
    }
    if (job.files.length !== served.files.length) {
      problems.push(`job ${job.jobId}: ${job.files.length} files, the service made ${served.files.length}`);
    }
    for (const file of job.files) {
      const generated = served.files.find((f) => f.fileId === file.fileId);
      if (file.key === undefined || file.bucket === undefined || generated === undefined) {
        problems.push(`job ${job.jobId}: file ${file.fileId} not stored or not generated`);
        continue;
      }
      expectedKeys.add(file.key);
      const object = await t.readObject(file.bucket, file.key);
      const actual = { sha256: sha256(object.bytes), size: object.bytes.length };
      if (actual.sha256 !== generated.sha256 || actual.size !== generated.size) {
        problems.push(
          `job ${job.jobId}: s3 ${JSON.stringify(actual)} ≠ service ${JSON.stringify(generated)}`,
        );
      }
      if (file.sha256 !== generated.sha256) problems.push(`job ${job.jobId}: recorded sha256 differs`);
    }
  }
  const ours = (key: string): boolean =>
    options.wholeBucket !== false || stored.some((job) => key.includes(job.jobId));
  for (const key of await listKeys(t.s3, t.stack.aws.bucket)) {
    if (ours(key) && !expectedKeys.has(key)) problems.push(`s3 object ${key} belongs to no stored job`);
  }
  return problems;
}

/**
 * Makes an SQS client refuse SendMessageBatch (what the ingest and the reconciler use to queue jobs) while
 * `down` is true: the queue unavailable, as a network error would make it. Receives, deletes and visibility
 * changes still work, so the workers carry on with what is queued.
 */
export function queueOutageSwitch(sqs: SQSClient): { down: boolean; refused: number } {
  const state = { down: false, refused: 0 };
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      if (state.down && context.commandName === 'SendMessageBatchCommand') {
        state.refused += 1;
        throw Object.assign(new Error('connect ECONNREFUSED (injected by the test)'), {
          name: 'NetworkingError',
        });
      }
      return next(args);
    },
    { step: 'initialize', name: 'testQueueOutage' },
  );
  return state;
}

/** The soaks' settings, from the environment where it sets them (see soak.test.ts and soak-crash.test.ts). */
export interface SoakSettings {
  readonly deliveries: number;
  /** Seed of the service's fault dice: fixed by default, so a CI failure names it and replays the same faults. */
  readonly seed: number;
  /** Settling time allowed in all: generous, the runs share two noisy cores. Not a performance assertion. */
  readonly settleMs: number;
  /**
   * The queue's visibility timeout (the lease) and the worker's backoff base: quick ones by default;
   * SOAK_VISIBILITY_SECONDS=60 SOAK_RETRY_BASE_SECONDS=5 are `npm start`'s, the figures of bench/analysis.md.
   */
  readonly visibilitySeconds: number;
  readonly retryBaseSeconds: number;
  /** How long the service's download links live. */
  readonly linkTtlMs: number;
}

/**
 * Reads SOAK_SEED, SOAK_SETTLE_MS, SOAK_VISIBILITY_SECONDS, SOAK_RETRY_BASE_SECONDS, SOAK_LINK_TTL_MS and the
 * size from `sizeVariable` (bounded to min..2000), each with the soak's default.
 */
export function soakSettings(defaults: {
  readonly sizeVariable: string;
  readonly deliveries: number;
  readonly minDeliveries: number;
  readonly seed: number;
  readonly linkTtlMs: number;
}): SoakSettings {
  const env = process.env;
  const deliveries = Math.max(
    defaults.minDeliveries,
    Math.min(2000, Number(env[defaults.sizeVariable] ?? defaults.deliveries) || defaults.deliveries),
  );
  return {
    deliveries,
    seed: Number(env.SOAK_SEED ?? defaults.seed),
    settleMs: Number(env.SOAK_SETTLE_MS ?? 0) || 60_000 + deliveries * 2_000,
    visibilitySeconds: Number(env.SOAK_VISIBILITY_SECONDS ?? 5) || 5,
    retryBaseSeconds: Number(env.SOAK_RETRY_BASE_SECONDS ?? 1) || 1,
    linkTtlMs: Math.max(100, Number(env.SOAK_LINK_TTL_MS ?? defaults.linkTtlMs) || defaults.linkTtlMs),
  };
}

/** A job record cut to what a failed assertion should show. */
export const brief = (job: JobRecord) => ({
  jobId: job.jobId,
  status: job.status,
  attempts: job.attempts,
  error: job.error,
  lastError: job.lastError,
});

/** Create-document calls the service answered (every POST, faults included). */
export const createCalls = (stats: EmulatorStats): number =>
  stats.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/documents')).length;

/** Prints a soak's figures on one line (`name: key=value ...`), whatever its assertions then say. */
export function printSummary(name: string, summary: Readonly<Record<string, unknown>>): void {
  console.log(
    `${name}: ${Object.entries(summary)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`,
  );
}

/**
 * Nothing open once a reconciler pass has marked the deliveries whose grace is over (every job is final, so
 * it sends nothing), and nothing the table lists as stranded.
 */
export async function expectNothingOpen(t: TestStack): Promise<void> {
  expect((await t.stack.reconcileNow(Date.now() + 61_000)).jobsResent).toBe(0);
  expect(await t.stack.jobs.listStranded(Number.MAX_SAFE_INTEGER)).toEqual({ deliveries: [], jobs: [] });
}

/** The faults the service injected, by kind (a soak's summary): 429s, 5xx, failed and truncated downloads. */
export const faultsDrawn = (stats: EmulatorStats) => ({
  '429': faultCount(stats, 'rate429'),
  '5xx': faultCount(stats, 'rate5xx'),
  downloadFail: faultCount(stats, 'downloadFail'),
  truncated: faultCount(stats, 'downloadTruncate'),
});
