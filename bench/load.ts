/**
 * `npm run load`: a bounded load run through the local stack (a script, not a test). Sends `--count` signed
 * webhooks (internal notes, Standard Webhooks) at `--rate` per second, a share of them twice, waits (bounded)
 * for every accepted job to end, and prints one table: accepted, stored, failed, lost (accepted jobs neither
 * stored nor failed at the end: must be 0), duplicates (documents the service made beyond one per job and
 * one per expired link: must be 0), ack latency p50/p99 and end-to-end p50/p99 (receivedAt → stored).
 * Exits 1 when anything was lost or duplicated.
 *
 * By default it starts a local stack in-process on a fresh temporary data directory (and removes it after).
 * `--url http://127.0.0.1:3000 --data-dir .docrelay` targets a running `npm start` instead (its secrets and
 * endpoints are read from the data directory; the emulator's statistics are reset at the start). Loopback
 * only. `--faults` turns on the soak's mix of service faults in the embedded emulator.
 *
 *   npm run load -- --count 500 --rate 50 [--duplicates 0.05] [--wait 300] [--faults] [--concurrency N]
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { readLocalSettings } from '../functions/commons/env';
import type { JobView } from '../functions/core/job-view';
import { SOAK_FAULTS } from '../local/emulator/faults';
import type { EmulatorStats } from '../local/emulator/server';
import { type LocalStack, startLocalStack } from '../local/stack/local-stack';
import { readEndpoints } from '../local/state-files';
import { signStandardWebhooks } from '../test/e2e/helpers/webhooks';

const USAGE =
  'usage: npm run load -- [--count N] [--rate N] [--duplicates 0..1] [--wait SECONDS] [--faults] [--concurrency N] [--url http://127.0.0.1:PORT --data-dir DIR]';

interface Options {
  readonly count: number;
  readonly rate: number;
  readonly duplicates: number;
  readonly waitSeconds: number;
  readonly faults: boolean;
  readonly concurrency?: number;
  readonly url?: string;
  readonly dataDir?: string;
}

/** What the load run reads of a job. */
type JobStatus = Pick<JobView, 'jobId' | 'status' | 'receivedAt' | 'updatedAt'>;

/** Where the load goes, and how to read back jobs and the service's statistics. */
interface Target {
  readonly url: string;
  readonly secret: string;
  getJob(jobId: string): Promise<JobStatus | undefined>;
  /** The service emulator's statistics, when it is the emulator (undefined for a real service). */
  stats(): Promise<EmulatorStats | undefined>;
  close(): Promise<void>;
}

function readOptions(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      count: { type: 'string', default: '100' },
      rate: { type: 'string', default: '20' },
      duplicates: { type: 'string', default: '0.05' },
      wait: { type: 'string', default: '180' },
      faults: { type: 'boolean', default: false },
      concurrency: { type: 'string' },
      url: { type: 'string' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const number = (name: string, text: string, min: number, max: number): number => {
    const value = Number(text);
    if (!Number.isFinite(value) || value < min || value > max) {
      throw new Error(`--${name} must be a number from ${min} to ${max}, got "${text}"`);
    }
    return value;
  };
  const url = values.url;
  if (url !== undefined) {
    const host = new URL(url).hostname;
    if (!['127.0.0.1', 'localhost', '[::1]', '::1'].includes(host)) {
      throw new Error(`--url must be on loopback (127.0.0.1, localhost, ::1), got ${host}`);
    }
  }
  return {
    count: Math.floor(number('count', values.count, 1, 100_000)),
    rate: number('rate', values.rate, 0.1, 1_000),
    duplicates: number('duplicates', values.duplicates, 0, 1),
    waitSeconds: number('wait', values.wait, 1, 3_600),
    faults: values.faults,
    ...(values.concurrency === undefined
      ? {}
      : { concurrency: Math.floor(number('concurrency', values.concurrency, 1, 100)) }),
    ...(url === undefined ? {} : { url: url.replace(/\/+$/, '') }),
    ...(values['data-dir'] === undefined ? {} : { dataDir: resolve(values['data-dir']) }),
  };
}

const readSecrets = async (file: string): Promise<Record<string, string>> =>
  JSON.parse(await readFile(file, 'utf8')) as Record<string, string>;

/** A local stack started here, on a temporary data directory. */
async function startInProcess(options: Options): Promise<Target> {
  const dataDir = await mkdtemp(join(tmpdir(), 'docrelay-load-'));
  const settings = readLocalSettings({ PORT: '0', DOCRELAY_DATA_DIR: dataDir }, resolve(__dirname, '..'));
  let stack: LocalStack;
  try {
    stack = await startLocalStack({
      settings,
      logLevel: 'SILENT',
      // Quick retries, as in the tests: a fault costs seconds, not minutes.
      visibilityTimeoutSeconds: 10,
      maxReceiveCount: 8,
      retryBaseSeconds: 1,
      ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
      ...(options.faults
        ? {
            emulator: {
              faults: {
                ...SOAK_FAULTS,
                linkTtlMs: 900,
              },
            },
          }
        : {}),
    });
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  const secrets = await readSecrets(settings.secretsFile);
  return {
    url: stack.url,
    secret: secrets['docrelay/internal-notes-webhook'] ?? '',
    getJob: async (jobId) => {
      const job = await stack.jobs.getJob(jobId);
      return job === undefined
        ? undefined
        : { jobId, status: job.status, receivedAt: job.receivedAt, updatedAt: job.updatedAt };
    },
    stats: async () => stack.emulator?.stats(),
    close: async () => {
      await stack.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A running `npm start`, found through its data directory. */
async function connect(url: string, dataDir: string): Promise<Target> {
  const settings = readLocalSettings({ DOCRELAY_DATA_DIR: dataDir }, process.cwd());
  const secrets = await readSecrets(settings.secretsFile);
  const endpoints = await readEndpoints(dataDir);
  const docgen = endpoints?.docgen?.baseUrl;
  const apiKey = secrets['docrelay/service-api-key'];
  const admin = async (path: string, method: 'GET' | 'POST'): Promise<Response | undefined> => {
    if (
      docgen === undefined ||
      apiKey === undefined ||
      !/^http:\/\/(127\.0\.0\.1|localhost)[:/]/.test(docgen)
    )
      return undefined;
    const response = await fetch(`${docgen}/_emulator/${path}`, {
      method,
      headers: { 'x-api-key': apiKey },
    }).catch(() => undefined);
    return response?.ok === true ? response : undefined;
  };
  await admin('reset-stats', 'POST');
  return {
    url,
    secret: secrets['docrelay/internal-notes-webhook'] ?? '',
    getJob: async (jobId) => {
      const response = await fetch(`${url}/v1/jobs/${encodeURIComponent(jobId)}`);
      return response.status === 200 ? ((await response.json()) as JobView) : undefined;
    },
    stats: async () => {
      const response = await admin('stats', 'GET');
      return response === undefined ? undefined : ((await response.json()) as EmulatorStats);
    },
    close: async () => undefined,
  };
}

const percentile = (values: readonly number[], p: number): number => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};

interface Sent {
  readonly status: number;
  readonly ms: number;
  readonly jobIds: readonly string[];
  readonly duplicate: boolean;
}

async function post(target: Target, title: string, webhookId: string): Promise<Sent> {
  const body = Buffer.from(JSON.stringify({ type: 'note.created', data: { title, body: `Load ${title}` } }));
  const started = performance.now();
  try {
    const response = await fetch(`${target.url}/v1/hooks/internal-notes`, {
      method: 'POST',
      headers: signStandardWebhooks(body, target.secret, webhookId),
      body,
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    const ms = performance.now() - started;
    const parsed = response.ok
      ? (JSON.parse(text) as { jobs?: Array<{ jobId: string }>; duplicate?: boolean })
      : {};
    return {
      status: response.status,
      ms,
      jobIds: (parsed.jobs ?? []).map((job) => job.jobId),
      duplicate: parsed.duplicate === true,
    };
  } catch {
    return { status: 0, ms: performance.now() - started, jobIds: [], duplicate: false };
  }
}

async function main(): Promise<number> {
  const options = readOptions(process.argv.slice(2));
  if (options.url !== undefined && options.dataDir === undefined) throw new Error('--url needs --data-dir');
  const target =
    options.url === undefined
      ? await startInProcess(options)
      : await connect(options.url, options.dataDir as string);
  try {
    const runId = randomUUID().slice(0, 8);
    const sends: Array<Promise<Sent>> = [];
    const intervalMs = 1000 / options.rate;
    const started = performance.now();
    // Paced: request i leaves at started + i × interval; at most 256 in flight, so a stalled server cannot
    // make this loop pile up requests without bound.
    let inFlight = 0;
    for (let i = 0; i < options.count; i += 1) {
      const due = started + i * intervalMs;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      for (let spins = 0; inFlight >= 256 && spins < 3_000; spins += 1) await sleep(10);
      const webhookId = `load-${runId}-${i}`;
      const copies = Math.random() < options.duplicates ? 2 : 1;
      for (let c = 0; c < copies; c += 1) {
        inFlight += 1;
        sends.push(
          post(target, `${runId} ${i}`, webhookId).finally(() => {
            inFlight -= 1;
          }),
        );
      }
    }
    const answers = await Promise.all(sends);
    const sendSeconds = (performance.now() - started) / 1000;
    const accepted = answers.filter((a) => a.status === 202);
    const jobIds = accepted.flatMap((a) => a.jobIds);
    const duplicatesAnswered = answers.filter((a) => a.status === 200 && a.duplicate).length;
    const refused = answers.filter((a) => a.status !== 202 && !(a.status === 200 && a.duplicate)).length;

    // Wait (bounded) for every accepted job to be stored or failed.
    const views = new Map<string, JobStatus>();
    const deadline = Date.now() + options.waitSeconds * 1000;
    for (let round = 0; round < 100_000 && Date.now() < deadline; round += 1) {
      const open = jobIds.filter((id) => {
        const status = views.get(id)?.status;
        return status !== 'stored' && status !== 'failed';
      });
      if (open.length === 0) break;
      for (let i = 0; i < open.length; i += 32) {
        const group = await Promise.all(open.slice(i, i + 32).map((id) => target.getJob(id)));
        for (const view of group) if (view !== undefined) views.set(view.jobId, view);
      }
      await sleep(500);
    }
    const stored = jobIds.filter((id) => views.get(id)?.status === 'stored');
    const failed = jobIds.filter((id) => views.get(id)?.status === 'failed');
    const lost = jobIds.length - stored.length - failed.length;
    const stats = await target.stats();
    const expired =
      stats?.requests.filter((r) => r.path === '/download' && r.status === 404).length ?? Number.NaN;
    const duplicates = stats === undefined ? Number.NaN : stats.documentsCreated - stored.length - expired;
    const endToEnd = stored.map((id) => {
      const view = views.get(id) as JobStatus;
      return Date.parse(view.updatedAt) - Date.parse(view.receivedAt);
    });
    const acks = answers.filter((a) => a.status === 202 || a.status === 200).map((a) => a.ms);
    const fmt = (ms: number): string => (Number.isFinite(ms) ? `${Math.round(ms)} ms` : 'n/a');
    const rows: Array<[string, string]> = [
      ['webhooks sent', `${answers.length} (${options.count} deliveries, ${sendSeconds.toFixed(1)} s)`],
      ['accepted (202)', String(accepted.length)],
      ['answered duplicate', String(duplicatesAnswered)],
      ['refused / errors', String(refused)],
      ['jobs', String(jobIds.length)],
      ['stored', String(stored.length)],
      ['failed', String(failed.length)],
      ['lost', String(lost)],
      ['expired-link regenerations', Number.isNaN(expired) ? 'n/a' : String(expired)],
      ['duplicates', Number.isNaN(duplicates) ? 'n/a (not the emulator)' : String(duplicates)],
      ['ack latency p50 / p99', `${fmt(percentile(acks, 50))} / ${fmt(percentile(acks, 99))}`],
      ['end-to-end p50 / p99', `${fmt(percentile(endToEnd, 50))} / ${fmt(percentile(endToEnd, 99))}`],
    ];
    const width = Math.max(...rows.map(([name]) => name.length));
    console.log(
      `load: ${options.count} deliveries at ${options.rate}/s${options.faults ? ' with faults' : ''}${options.url === undefined ? ' (in-process stack)' : ` against ${options.url}`}`,
    );
    for (const [name, value] of rows) console.log(`  ${name.padEnd(width)}  ${value}`);
    const bad = lost > 0 || (Number.isFinite(duplicates) && duplicates !== 0);
    if (bad) console.log('FAIL: jobs were lost or documents duplicated');
    return bad ? 1 : 0;
  } finally {
    await target.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`load: ${error instanceof Error ? error.message : String(error)}`);
    console.error(USAGE);
    process.exitCode = 2;
  },
);
