/**
 * Benchmark 5, end to end: signed GitHub release webhooks (two documents each, from the two-file release
 * pack template) posted to the local stack, from the first POST to the last file stored in S3, at worker
 * concurrency (`service.maxConcurrency`) 1, 4 and 16, with the emulator generating at once and in 200 ms.
 * Webhook-to-stored latency is each job's record: `receivedAt` → `updatedAt` of the `stored` write.
 * No baseline runs: the figures are throughput and latency, the reference is the generation latency itself.
 */

import { createHmac, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createDynamoDbClient } from '../functions/adapters/aws-clients';
import { DynamoJobRepository } from '../functions/adapters/dynamodb/job-table';
import { readLocalSettings } from '../functions/commons/env';
import type { JobRecord } from '../functions/core/job';
import { ENQUEUE_GRACE_MS } from '../functions/core/outbox';
import { LOCAL_CREDENTIALS } from '../local/stack/aws-emulators';
import { type LocalStack, startLocalStack } from '../local/stack/local-stack';
import { fmt, quantile } from './harness';
import type { ResultRow } from './results';

const ROOT = resolve(__dirname, '..');

/** Options of the end-to-end benchmark. */
export interface EndToEndOptions {
  /** Webhooks per configuration. */
  readonly webhooks: number;
  readonly concurrencies?: readonly number[];
  readonly latenciesMs?: readonly number[];
  /** Posts in flight at once. @default 4 */
  readonly postParallelism?: number;
  /** Bound on one configuration's wait for its jobs. @default 120_000 */
  readonly timeoutMs?: number;
}

/** One configuration's measurements. */
export interface EndToEndRun {
  readonly concurrency: number;
  readonly generationLatencyMs: number;
  readonly webhooks: number;
  readonly jobs: number;
  readonly stored: number;
  readonly seconds: number;
  readonly webhooksPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Mean time a worker spent on one job (claim → stored), the figure the cost model bills. */
  readonly meanJobMs: number;
  /**
   * DynamoDB capacity the stack's own table calls consumed per stored job (ReturnConsumedCapacity: TOTAL on
   * every call of the handlers, the reconciler included; the benchmark's polling is not counted). The table's
   * units only: the emulator does not report index writes.
   */
  readonly tableWriteUnitsPerJob: number;
  readonly tableReadUnitsPerJob: number;
  /** Mean size of the files stored, bytes. */
  readonly meanStoredBytes: number;
}

/** Sums the capacity the stack's DynamoDB calls consume, asking every call to report it. */
function meterCapacity(stack: LocalStack): { writes: number; reads: number; reset(): void } {
  const meter = {
    writes: 0,
    reads: 0,
    reset() {
      meter.writes = 0;
      meter.reads = 0;
    },
  };
  stack.clients.dynamodb.middlewareStack.add(
    (next, context) => async (args) => {
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      const result = await next(args);
      const consumed = (result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
      const all = (Array.isArray(consumed) ? consumed : [consumed]) as Array<
        { CapacityUnits?: number } | undefined
      >;
      const units = all.reduce((sum, entry) => sum + (entry?.CapacityUnits ?? 0), 0);
      if (/^(Get|Query|Scan|BatchGet)/.test(String(context.commandName))) meter.reads += units;
      else meter.writes += units;
      return result;
    },
    { step: 'initialize', name: 'docrelayBenchConsumedCapacity' },
  );
  return meter;
}

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** Runs every configuration; one row per configuration. */
export async function runEndToEnd(
  options: EndToEndOptions,
): Promise<{ rows: ResultRow[]; runs: EndToEndRun[] }> {
  const release = JSON.parse(
    await readFile(join(ROOT, 'config', 'samples', 'github-release-published.json'), 'utf8'),
  ) as object;
  // Each webhook is an event of its own, as real ones are: its bytes differ (the signed body dedupes too).
  let sent = 0;
  const nextBody = (): Buffer => {
    sent += 1;
    return Buffer.from(JSON.stringify({ ...release, benchDelivery: sent }));
  };
  const runs: EndToEndRun[] = [];
  for (const concurrency of options.concurrencies ?? [1, 4, 16]) {
    const dataDir = await mkdtemp(join(tmpdir(), 'docrelay-bench-e2e-'));
    const settings = readLocalSettings({ DOCRELAY_DATA_DIR: dataDir, PORT: '0' }, ROOT);
    const stack = await startLocalStack({
      settings,
      concurrency,
      logLevel: 'SILENT',
      visibilityTimeoutSeconds: 60,
      emulator: { faults: { generationLatencyMs: 0 } },
    });
    // The benchmark's own polling reads through a client of its own, so the meter sees the stack's calls only.
    const pollClient = createDynamoDbClient({
      region: stack.aws.region,
      credentials: LOCAL_CREDENTIALS,
      endpoints: stack.aws.endpoints,
    });
    const poll = new DynamoJobRepository(pollClient, stack.aws.tableName);
    const meter = meterCapacity(stack);
    try {
      const secrets = JSON.parse(await readFile(settings.secretsFile, 'utf8')) as Record<string, string>;
      const sign = (body: Buffer): string =>
        `sha256=${createHmac('sha256', secrets['docrelay/github-webhook'] ?? '')
          .update(body)
          .digest('hex')}`;
      for (const latency of options.latenciesMs ?? [0, 200]) {
        stack.emulator?.setFaults({ generationLatencyMs: latency });
        const jobIds: string[] = [];
        meter.reset();
        const started = Date.now();
        let next = 0;
        const poster = async (): Promise<void> => {
          while (next < options.webhooks) {
            next += 1;
            const body = nextBody();
            const response = await fetch(`${stack.url}/v1/hooks/github-releases`, {
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                'x-github-event': 'release',
                'x-github-delivery': randomUUID(),
                'x-hub-signature-256': sign(body),
              },
              body,
            });
            const answer = (await response.json()) as { jobs?: Array<{ jobId: string }> };
            if (response.status !== 202) throw new Error(`webhook answered ${response.status}`);
            for (const job of answer.jobs ?? []) jobIds.push(job.jobId);
          }
        };
        await Promise.all(Array.from({ length: options.postParallelism ?? 4 }, poster));
        const deadline = Date.now() + (options.timeoutMs ?? 120_000);
        let records: JobRecord[] = [];
        for (;;) {
          records = (await Promise.all(jobIds.map((id) => poll.getJob(id)))).filter(
            (job): job is JobRecord => job !== undefined,
          );
          const open = records.filter((job) => job.status !== 'stored' && job.status !== 'failed');
          if (records.length === jobIds.length && open.length === 0) break;
          if (Date.now() > deadline) throw new Error(`${open.length} of ${jobIds.length} jobs still open`);
          await sleep(100);
        }
        // The reconciler closes each delivery once its grace is over (the ingest leaves it open): its reads and
        // its write belong to every document's cost, so one pass past the grace runs inside the meter.
        await stack.reconcileNow(Date.now() + ENQUEUE_GRACE_MS + 1_000);
        const stored = records.filter((job) => job.status === 'stored');
        const files = stored.flatMap((job) => job.files);
        const storedBytes = files.reduce((sum, file) => sum + (file.storedSize ?? 0), 0);
        const latencies = stored
          .map((job) => Date.parse(job.updatedAt) - Date.parse(job.receivedAt))
          .sort((a, b) => a - b);
        const finished = Math.max(...stored.map((job) => Date.parse(job.updatedAt)));
        const seconds = (finished - started) / 1000;
        // Worker time per job: the claim (createdAt is the ingest's) is not recorded, so this is the
        // job's stored latency minus its wait, estimated from throughput: lanes × elapsed / jobs.
        const meanJobMs = (concurrency * seconds * 1000) / Math.max(1, stored.length);
        runs.push({
          concurrency,
          generationLatencyMs: latency,
          webhooks: options.webhooks,
          jobs: jobIds.length,
          stored: stored.length,
          seconds,
          webhooksPerSecond: options.webhooks / seconds,
          p50Ms: quantile(latencies, 0.5),
          p99Ms: quantile(latencies, 0.99),
          meanJobMs: Math.min(meanJobMs, quantile(latencies, 0.5)),
          tableWriteUnitsPerJob: meter.writes / Math.max(1, stored.length),
          tableReadUnitsPerJob: meter.reads / Math.max(1, stored.length),
          meanStoredBytes: storedBytes / Math.max(1, files.length),
        });
      }
    } finally {
      pollClient.destroy();
      await stack.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  const rows: ResultRow[] = runs.map((run) => ({
    benchmark: 'e2e',
    case: `maxConcurrency ${run.concurrency}, generation ${run.generationLatencyMs} ms`,
    metric: `webhooks/s ack→stored (${run.jobs} jobs, ${run.stored} stored); p50/p99 webhook→stored`,
    subject: `${fmt(run.webhooksPerSecond)} webhooks/s (${fmt((2 * run.webhooksPerSecond * run.jobs) / Math.max(1, 2 * run.webhooks))} jobs/s); p50 ${fmt(run.p50Ms)} ms, p99 ${fmt(run.p99Ms)} ms`,
    data: { ...run },
  }));
  return { rows, runs };
}
