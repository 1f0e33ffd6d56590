/**
 * The benchmark harness and the in-process benchmarks run and report the rows docs/benchmarks.md is built
 * from. Timings are never asserted: only that every expected row is there, with a finite ratio.
 */

import { costPer1000 } from '../../../bench/cost-model';
import { summarizeProfile } from '../../../bench/cpu-profile';
import { compare, perCall, perCallCpu, quantile, summarize } from '../../../bench/harness';
import { runBundledIngestHandler } from '../../../bench/ingest-bundle';
import { runIngestOverhead } from '../../../bench/ingest-overhead';
import { parseArgs, renderMarkdown } from '../../../bench/run';

describe('the harness', () => {
  it('interleaves subject and baseline for every round after the warm-up', async () => {
    const calls: string[] = [];
    const result = await compare({
      rounds: 4,
      warmup: 1,
      subject: async () => {
        calls.push('s');
        return 2;
      },
      baseline: async () => {
        calls.push('b');
        return 1;
      },
    });
    expect(calls).toEqual(['s', 'b', 'b', 's', 's', 'b', 'b', 's', 's', 'b']);
    expect(result.subjectSamples).toHaveLength(4);
    expect(result.baselineSamples).toHaveLength(4);
    expect(result.ratio).toBe(2);
  });

  it('summarises median and quartiles', () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(summarize([5, 1, 3])).toMatchObject({ median: 3, min: 1, max: 5, n: 3 });
  });

  it('measures an operation per call', async () => {
    const sample = await perCall(() => undefined, 10)();
    expect(Number.isFinite(sample)).toBe(true);
  });

  it('measures the CPU time of an operation per call', async () => {
    let calls = 0;
    const sample = await perCallCpu(async () => {
      calls += 1;
    }, 10)();
    expect(calls).toBe(10);
    expect(sample).toBeGreaterThanOrEqual(0);
    expect(Number.isFinite(sample)).toBe(true);
  });
});

describe('the ingest overhead benchmark', () => {
  it('reports acceptWebhook and the handler against the floor at each size', async () => {
    const rows = await runIngestOverhead({ rounds: 1, batchMs: 1 });
    expect(rows.map((row) => row.case.replace(/ \(\d+ B\)/, ''))).toEqual([
      '1 KB, acceptWebhook',
      '1 KB, Lambda handler + SDK, in process (tsx)',
      '20 KB, acceptWebhook',
      '20 KB, Lambda handler + SDK, in process (tsx)',
      '1 MB, acceptWebhook',
      '1 MB, Lambda handler + SDK, in process (tsx)',
    ]);
    for (const row of rows) expect(Number.isFinite(row.ratio)).toBe(true);
    expect(
      rows.filter((row) => row.case.startsWith('20 KB')).map((row) => [row.case.split(', ')[1], row.target]),
    ).toEqual([
      ['acceptWebhook', '≤ 3x'],
      // The handler's target is on its Lambda bundle (bench/ingest-bundle.ts).
      ['Lambda handler + SDK', undefined],
    ]);
  }, 60_000);

  it('measures the handler from its Lambda bundle in a fresh process, the target at 20 KB', async () => {
    const rows = await runBundledIngestHandler({ rounds: 1, batchMs: 1, sizes: ['20 KB'] });
    expect(rows.map((row) => row.case)).toEqual(['20 KB (21370 B), Lambda handler + SDK, Lambda bundle']);
    expect(rows[0]?.target).toBe('≤ 20x');
    expect(Number.isFinite(rows[0]?.ratio)).toBe(true);
  }, 120_000);
});

describe('the report', () => {
  it('computes a cost per 1,000 documents from its inputs', () => {
    const cost = costPer1000({
      ingestMs: 40,
      ingestMemoryMb: 512,
      workerMs: 400,
      workerMemoryMb: 1024,
      fileBytes: 30_000,
      fileBytesMeasured: true,
      secretCallsPerDocument: 0,
      s3PutsPerFile: 1,
      dynamo: { tableWrites: 10, tableReads: 3, indexWrites: 12, measured: true },
    });
    const dynamo = cost.lines.find((line) => line.item === 'DynamoDB on demand');
    expect(dynamo?.count).toBe(
      '10.0 WRU + 3.00 RRU on the table (measured) + 12.0 WRU on the indexes (assumed)',
    );
    expect(dynamo?.dollarsPer1000).toBeCloseTo(1000 * (22 * 0.625e-6 + 3 * 0.125e-6), 10);
    expect(cost.lines.find((line) => line.item.startsWith('S3 storage'))?.count).toContain('(measured)');
    expect(cost.total).toBeGreaterThan(0);
  });

  it('summarises a CPU profile by function and package, leaving idle time out', () => {
    const summary = summarizeProfile({
      nodes: [
        { id: 1, callFrame: { functionName: '(idle)', url: '', lineNumber: 0 } },
        {
          id: 2,
          callFrame: { functionName: 'parse', url: 'file:///x/node_modules/zod/index.js', lineNumber: 9 },
        },
        {
          id: 3,
          callFrame: { functionName: 'acceptWebhook', url: 'file:///r/functions/ingest/a.ts', lineNumber: 0 },
        },
      ],
      samples: [1, 2, 2, 3],
      timeDeltas: [1000, 1000, 1000, 1000],
    });
    expect(summary.totalMs).toBe(3);
    expect(summary.packages.map((entry) => entry.name)).toEqual(['zod', 'functions/ingest']);
  });

  it('parses --quick and --only, and refuses unknown benchmarks', () => {
    expect(parseArgs(['--quick', '--only', 'copy,ingest'])).toEqual({
      quick: true,
      only: ['copy', 'ingest'],
      write: false,
    });
    expect(parseArgs(['--only=e2e', '--no-write']).only).toEqual(['e2e']);
  });

  it('writes docs/benchmarks.md only for a full run, or when a partial run asks with --write', () => {
    expect(parseArgs([]).write).toBe(true);
    expect(parseArgs(['--no-write']).write).toBe(false);
    expect(parseArgs(['--only', 'copy']).write).toBe(false);
    expect(parseArgs(['--quick']).write).toBe(false);
    expect(parseArgs(['--quick', '--write']).write).toBe(true);
    expect(() => parseArgs(['--only', 'nope'])).toThrow(/--only/);
  });

  it('writes a table with the machine and the command', () => {
    const markdown = renderMarkdown({
      startedAt: '2025-01-01T00:00:00.000Z',
      command: 'npm run bench',
      machine: { cpu: 'CPU', cores: 2, memoryGb: 4, node: 'v20', platform: 'linux x64' },
      quick: false,
      rows: [
        {
          benchmark: 'copy',
          case: '1 MB',
          metric: 'MB/s',
          subject: '1',
          baseline: '1',
          ratio: 1,
          target: '≥ 0.9x',
          met: true,
        },
      ],
      e2e: [],
      seconds: 1,
    });
    expect(markdown).toContain('| copy | 1 MB | MB/s | 1 | 1 | 1.00x | ≥ 0.9x | yes |');
    expect(markdown).toContain('Machine: CPU, 2 cores');
    expect(markdown).toContain('`npm run bench`');
  });
});
