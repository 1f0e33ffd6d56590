/**
 * `npm run bench`: every benchmark, each subject beside its baseline in this one run, then the results as a
 * table in docs/benchmarks.md and as JSON in bench/results/latest.json.
 *
 *   npm run bench                      all benchmarks (under ten minutes on 2 cores)
 *   npm run bench -- --quick           small inputs, few rounds: a smoke run (about a minute)
 *   npm run bench -- --only copy,ingest
 *   npm run bench -- --no-write        print only (partial and quick runs print only, unless --write)
 *
 * Benchmarks: ingest, http, copy, cold-start, e2e, pipeline, worker, profile (cost is computed from ingest
 * and e2e).
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { runTsChild } from './child';
import { runColdStart } from './cold-start';
import { runCopy } from './copy-s3';
import {
  type CostInputs,
  costPer1000,
  DYNAMO_INDEX_WRITES_PER_DOCUMENT,
  DYNAMO_UNITS_PER_DOCUMENT,
  PRICES,
} from './cost-model';
import { type ProfileSummary, summarizeProfileFile } from './cpu-profile';
import { measureDynamoWrites } from './dynamo-writes';
import { type EndToEndRun, runEndToEnd } from './end-to-end';
import { fmt } from './harness';
import { runBundledIngestHandler } from './ingest-bundle';
import { runIngestHttp } from './ingest-http';
import { runIngestOverhead } from './ingest-overhead';
import { runPipelineIsolated } from './pipeline';
import { type ResultRow, rowLine } from './results';
import { runWorkerCpu } from './worker-cpu';

const ROOT = resolve(__dirname, '..');
const MiB = 1024 * 1024;

/** The benchmarks by name, in the order they run. */
export const BENCHMARKS = [
  'ingest',
  'http',
  'copy',
  'cold-start',
  'e2e',
  'pipeline',
  'worker',
  'profile',
] as const;
/** One of BENCHMARKS. */
export type BenchmarkName = (typeof BENCHMARKS)[number];

/** Parsed command line. */
export interface BenchArgs {
  readonly quick: boolean;
  readonly only: readonly BenchmarkName[];
  readonly write: boolean;
}

/** Parses `--quick`, `--only a,b` (or `--only=a,b`) and `--no-write`; throws on anything else. */
export function parseArgs(argv: readonly string[]): BenchArgs {
  let quick = false;
  let write = true;
  let only: BenchmarkName[] = [...BENCHMARKS];
  const isName = (name: string): name is BenchmarkName => (BENCHMARKS as readonly string[]).includes(name);
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (arg === '--quick') quick = true;
    else if (arg === '--no-write') write = false;
    else if (arg === '--write') write = true;
    else if (arg === '--only' || arg.startsWith('--only=')) {
      if (arg === '--only') i += 1;
      const list = arg === '--only' ? (argv[i] ?? '') : arg.slice('--only='.length);
      const names = list
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name !== '');
      const unknown = names.filter((name) => !isName(name));
      if (names.length === 0 || unknown.length > 0) {
        throw new Error(`--only takes a list of ${BENCHMARKS.join(', ')}; got "${list}"`);
      }
      only = names.filter(isName);
    } else throw new Error(`unknown argument ${arg} (use --quick, --only <names>, --no-write)`);
  }
  // docs/benchmarks.md holds one full run: a partial or quick run prints, and writes only when asked with
  // --write (e.g. the smoke test's temporary output).
  const full = !quick && only.length === BENCHMARKS.length;
  return { quick, only, write: write && (full || argv.includes('--write')) };
}

/** Everything one run produced. */
export interface BenchReport {
  readonly startedAt: string;
  readonly command: string;
  readonly machine: { cpu: string; cores: number; memoryGb: number; node: string; platform: string };
  readonly quick: boolean;
  readonly rows: ResultRow[];
  readonly e2e: EndToEndRun[];
  readonly profile?: ProfileSummary;
  readonly cost?: ReturnType<typeof costPer1000> & { inputs: CostInputs };
  readonly seconds: number;
}

/** Runs the selected benchmarks; prints each row as it comes. */
export async function runBenchmarks(
  args: BenchArgs,
  log: (line: string) => void = console.log,
): Promise<BenchReport> {
  const started = Date.now();
  const rows: ResultRow[] = [];
  const add = (more: readonly ResultRow[]): void => {
    for (const row of more) {
      rows.push(row);
      log(rowLine(row));
    }
  };
  const q = args.quick;
  const selected = new Set(args.only);
  let e2e: EndToEndRun[] = [];
  let profile: ProfileSummary | undefined;

  if (selected.has('ingest')) {
    log('— ingest overhead (in process, AWS answered instantly)');
    add(await runIngestOverhead({ rounds: q ? 3 : 11, batchMs: q ? 20 : 150 }));
    log('— ingest Lambda handler as bundled for Lambda (fresh process)');
    add(await runBundledIngestHandler({ rounds: q ? 3 : 11, batchMs: q ? 20 : 150 }));
  }
  if (selected.has('http')) {
    log('— ingest over HTTP (autocannon, loopback)');
    add(await runIngestHttp({ rounds: q ? 1 : 3, durationSeconds: q ? 1 : 5, connections: 8 }));
  }
  if (selected.has('copy')) {
    log('— copy to S3 (one process per copy)');
    // Nine rounds: one copy's throughput swings ±20% on these machines (either side), so the median of three
    // put the ratio anywhere in 0.8–1.0x for the same code (bench/analysis.md, 2026-11-27). The 1 MB and 64 MB
    // copies take about a second: 21 rounds of those (the median of nine still moved 0.90–1.10x from run to
    // run, bench/analysis.md, 2026-11-28).
    add(
      await runCopy({
        rounds: q ? 1 : 9,
        smallFileRounds: q ? 1 : 21,
        sizes: q ? [MiB, 8 * MiB] : [MiB, 64 * MiB, 512 * MiB],
      }),
    );
  }
  if (selected.has('cold-start')) {
    log('— cold start (esbuild bundles, fresh node per load)');
    add(await runColdStart({ rounds: q ? 2 : 9, ...(q ? { functions: ['ingest'] as const } : {}) }));
  }
  if (selected.has('e2e')) {
    log('— end to end (local stack)');
    const result = await runEndToEnd(
      q ? { webhooks: 3, concurrencies: [1, 4], latenciesMs: [0, 200] } : { webhooks: 24 },
    );
    e2e = result.runs;
    add(result.rows);
  }
  if (selected.has('pipeline')) {
    log(
      '— local pipeline, 10 webhooks in flight (closed loop; the stack and the client each in a fresh process)',
    );
    add((await runPipelineIsolated(q ? { webhooks: 20, warmup: 5 } : { webhooks: 300, warmup: 20 })).rows);
    // The same stack once its code is compiled and warm: the fresh run above pays V8's warm-up in every
    // process (bench/analysis.md, "Fresh and warm").
    if (!q) add((await runPipelineIsolated({ webhooks: 300, warmup: 300 })).rows);
  }
  if (selected.has('worker')) {
    log('— worker CPU per document (in process, AWS answered instantly, service and S3 faked on loopback)');
    add(
      await runWorkerCpu(
        q
          ? { rounds: 3, batchMs: 30, profileDocuments: 20 }
          : { rounds: 11, batchMs: 300, profileDocuments: 300 },
      ),
    );
  }
  if (selected.has('profile')) {
    log('— CPU profile of one end-to-end run');
    const dir = await mkdtemp(join(tmpdir(), 'docrelay-bench-prof-'));
    try {
      await runTsChild('bench/profile-e2e.ts', [q ? '3' : '40'], {
        nodeArgs: ['--cpu-prof', '--cpu-prof-dir', dir],
        timeoutMs: 300_000,
      });
      const files = (await readdir(dir)).filter((name) => name.endsWith('.cpuprofile'));
      if (files[0] !== undefined) profile = await summarizeProfileFile(join(dir, files[0]), 15);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    if (profile !== undefined) {
      log(`profile: ${fmt(profile.totalMs)} ms sampled; top packages by self time:`);
      for (const entry of profile.packages.slice(0, 8)) log(`  ${entry.percent.toFixed(1)}%  ${entry.name}`);
      rows.push({
        benchmark: 'profile',
        case: 'e2e maxConcurrency 4, generation 0 ms',
        metric: 'top self time (package)',
        subject: profile.packages
          .slice(0, 4)
          .map((entry) => `${entry.name} ${entry.percent.toFixed(0)}%`)
          .join(', '),
      });
    }
  }
  const writes = await measureDynamoWrites();
  const indexWrites = writes.total - writes.table;
  log(
    `DynamoDB writes per stored job: ${fmt(writes.total)} WRU (table ${fmt(writes.table)}, indexes ${fmt(indexWrites)})`,
  );
  const oneJob = await measureDynamoWrites({ jobsPerDelivery: 1, contentKey: false });
  for (const [shape, measured] of [
    ['two-job delivery with a content key', writes],
    ['one-job delivery, no content key', oneJob],
  ] as const) {
    rows.push({
      benchmark: 'dynamo-writes',
      case: `${shape}, one-file documents (dynalite, priced per item)`,
      metric: 'WRU per stored job',
      subject: Object.entries(measured)
        .map(([part, wru]) => `${part} ${fmt(wru)}`)
        .join(', '),
    });
  }
  const cost = costModel(rows, e2e, indexWrites);
  const cpu = cpus()[0]?.model ?? 'unknown';
  return {
    startedAt: new Date(started).toISOString(),
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    machine: {
      cpu,
      cores: cpus().length,
      memoryGb: Math.round(totalmem() / 1024 ** 3),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
    },
    quick: args.quick,
    rows,
    e2e,
    ...(profile === undefined ? {} : { profile }),
    ...(cost === undefined ? {} : { cost }),
    seconds: (Date.now() - started) / 1000,
  };
}

const medianOf = (row: ResultRow | undefined): number | undefined => {
  const subject = row?.data?.subject;
  return typeof subject === 'object' &&
    subject !== null &&
    'median' in subject &&
    typeof subject.median === 'number'
    ? subject.median
    : undefined;
};

/**
 * The cost model's inputs from this run: the ingest handler's measured time per request (its Lambda bundle)
 * plus the three AWS round trips it waits for (DynamoDB PutItem of the delivery, its jobs' PutItems side by
 * side, SQS SendMessageBatch; a content key adds a fourth; taken as 8 ms
 * each in region: an assumption, not measured
 * here), the worker's time per job at maxConcurrency 1 with 200 ms generation (saturated: elapsed / jobs),
 * the table's consumed capacity per job and the mean stored file size over every end-to-end run (measured;
 * a job there is one of a two-job delivery, so the ingest's writes are shared by two), and the index writes
 * (measured by ./dynamo-writes.ts: each write priced from the items before and after it).
 */
function costModel(
  rows: readonly ResultRow[],
  e2e: readonly EndToEndRun[],
  indexWrites: number,
): BenchReport['cost'] {
  const ingestUs = medianOf(
    rows.find(
      (row) =>
        row.benchmark === 'ingest' && row.case.startsWith('20 KB') && row.case.includes('Lambda bundle'),
    ),
  );
  const serial = e2e.find((run) => run.concurrency === 1 && run.generationLatencyMs === 200);
  if (ingestUs === undefined || serial === undefined) return undefined;
  const jobs = e2e.reduce((sum, run) => sum + run.stored, 0);
  const mean = (of: (run: EndToEndRun) => number): number =>
    e2e.reduce((sum, run) => sum + of(run) * run.stored, 0) / Math.max(1, jobs);
  const measured = jobs > 0 && e2e.every((run) => Number.isFinite(run.tableWriteUnitsPerJob));
  const inputs: CostInputs = {
    ingestMs: ingestUs / 1000 + 3 * 8,
    ingestMemoryMb: 512,
    workerMs: (serial.seconds * 1000) / Math.max(1, serial.stored),
    workerMemoryMb: 1024,
    fileBytes: measured ? mean((run) => run.meanStoredBytes) : 30 * 1024,
    fileBytesMeasured: measured,
    secretCallsPerDocument: 0.01,
    s3PutsPerFile: 1,
    dynamo: measured
      ? {
          tableWrites: mean((run) => run.tableWriteUnitsPerJob),
          tableReads: mean((run) => run.tableReadUnitsPerJob),
          indexWrites,
          measured: true,
          indexMeasured: true,
        }
      : {
          tableWrites: DYNAMO_UNITS_PER_DOCUMENT.writes - DYNAMO_INDEX_WRITES_PER_DOCUMENT,
          tableReads: DYNAMO_UNITS_PER_DOCUMENT.reads,
          indexWrites,
          measured: false,
          indexMeasured: true,
        },
  };
  return { ...costPer1000(inputs), inputs };
}

const escapeCell = (text: string): string => text.replace(/\|/g, '\\|');

/** docs/benchmarks.md from a report. */
export function renderMarkdown(report: BenchReport): string {
  const lines: string[] = [];
  lines.push('# Benchmarks');
  lines.push('');
  lines.push(
    'Produced by `bench/run.ts`; every ratio is docrelay against its baseline measured in the same run, interleaved,',
  );
  lines.push(
    'median with the interquartile range in brackets. Numbers from a shared, noisy machine: read ratios, not absolutes.',
  );
  lines.push('');
  lines.push(
    `- Command: \`${report.command}\`${report.quick ? ' (quick mode: smoke-sized, not for comparison)' : ''}`,
  );
  lines.push(
    `- Machine: ${report.machine.cpu}, ${report.machine.cores} cores, ${report.machine.memoryGb} GB, Node ${report.machine.node}, ${report.machine.platform}`,
  );
  lines.push(`- Run: ${report.startedAt}, ${fmt(report.seconds)} s`);
  lines.push('');
  lines.push(
    '| Benchmark | Case | Metric | docrelay | Baseline | Ratio (docrelay / baseline; / target where the baseline says so) | Target | Met |',
  );
  lines.push('|---|---|---|---|---|---|---|---|');
  for (const row of report.rows) {
    lines.push(
      `| ${row.benchmark} | ${escapeCell(row.case)} | ${escapeCell(row.metric)} | ${escapeCell(row.subject)} | ${escapeCell(row.baseline ?? '')} | ${row.ratio === undefined ? '' : `${fmt(row.ratio)}x`} | ${row.target ?? ''} | ${row.met === undefined ? '' : row.met ? 'yes' : '**no**'} |`,
    );
  }
  const cold = report.rows.find((row) => row.benchmark === 'cold-start' && row.case === 'ingest bundle');
  const top = cold?.data?.topPackages;
  if (Array.isArray(top)) {
    lines.push('');
    lines.push('## What the ingest bundle is made of');
    lines.push('');
    lines.push('| Package | Bytes in the minified bundle |');
    lines.push('|---|---|');
    for (const entry of top as Array<{ name: string; bytes: number }>) {
      lines.push(`| ${entry.name} | ${(entry.bytes / 1024).toFixed(0)} KB |`);
    }
  }
  if (report.profile !== undefined) {
    lines.push('');
    lines.push('## Where the end-to-end time goes (`--cpu-prof`, self time)');
    lines.push('');
    lines.push(`${fmt(report.profile.totalMs)} ms sampled over one run (maxConcurrency 4, generation 0 ms).`);
    lines.push('');
    lines.push('| Package | Self time |');
    lines.push('|---|---|');
    for (const entry of report.profile.packages.slice(0, 10)) {
      lines.push(`| ${escapeCell(entry.name)} | ${entry.percent.toFixed(1)}% |`);
    }
    lines.push('');
    lines.push('| Function | Self time |');
    lines.push('|---|---|');
    for (const entry of report.profile.functions.slice(0, 15)) {
      lines.push(`| \`${escapeCell(entry.name)}\` | ${entry.percent.toFixed(1)}% |`);
    }
  }
  if (report.cost !== undefined) {
    lines.push('');
    lines.push('## Cost per 1,000 documents');
    lines.push('');
    lines.push(`Prices: ${PRICES.source}. Lambda on arm64 at the construct's memory sizes.`);
    lines.push('');
    lines.push('| Item | Per document | $ per 1,000 documents |');
    lines.push('|---|---|---|');
    for (const line of report.cost.lines) {
      lines.push(`| ${line.item} | ${escapeCell(line.count)} | ${line.dollarsPer1000.toFixed(4)} |`);
    }
    lines.push(`| **Total** | | **${report.cost.total.toFixed(3)}** |`);
  }
  lines.push('');
  return `${lines.join('\n')}`;
}

/** The hand-written analysis (bench/analysis.md) appended to the generated page, so a run never loses it. */
async function readAnalysis(): Promise<string> {
  try {
    return await readFile(join(ROOT, 'bench', 'analysis.md'), 'utf8');
  } catch {
    return '';
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const report = await runBenchmarks(args);
  console.log(`\ndone in ${fmt(report.seconds)} s`);
  if (report.cost !== undefined) {
    for (const line of report.cost.lines) console.log(`  ${line.item}: ${line.count}`);
    console.log(`cost per 1,000 documents: $${report.cost.total.toFixed(3)}`);
  }
  if (!args.write) return;
  await mkdir(join(ROOT, 'bench', 'results'), { recursive: true });
  await writeFile(join(ROOT, 'bench', 'results', 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  const analysis = await readAnalysis();
  await writeFile(
    join(ROOT, 'docs', 'benchmarks.md'),
    `${renderMarkdown(report)}${analysis === '' ? '' : `\n${analysis}`}`,
  );
  console.log('wrote docs/benchmarks.md and bench/results/latest.json');
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.stack : error);
    process.exitCode = 1;
  });
}
