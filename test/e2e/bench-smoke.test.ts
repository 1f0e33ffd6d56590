/**
 * Every networked benchmark runs with smoke-sized inputs (the `--quick` sizes) and reports its rows. Loopback
 * only; timings are never asserted.
 */
import { runColdStart } from '../../bench/cold-start';
import { runCopy } from '../../bench/copy-s3';
import { runEndToEnd } from '../../bench/end-to-end';
import { runIngestHttp } from '../../bench/ingest-http';

describe('the benchmarks, smoke-sized', () => {
  it('ingest over HTTP reports req/s and p50/p99 against the bare server', async () => {
    const rows = await runIngestHttp({ rounds: 1, durationSeconds: 1, connections: 2 });
    expect(rows.map((row) => row.metric)).toEqual([
      'requests/s (docrelay / bare node:http)',
      'ms (docrelay / bare node:http)',
      'ms (docrelay / bare node:http)',
    ]);
    expect(rows[0]?.ratio).toBeGreaterThan(0);
  }, 120_000);

  it('copy to S3 reports throughput and RSS growth per size', async () => {
    const rows = await runCopy({ rounds: 1, sizes: [256 * 1024] });
    expect(rows.map((row) => row.case)).toEqual(['256 KB throughput', '256 KB peak RSS growth']);
    expect(rows[0]?.target).toBe('≥ 0.9x');
  }, 120_000);

  it('cold start reports the bundle size and load time of a function', async () => {
    const rows = await runColdStart({ rounds: 1, functions: ['ingest'] });
    expect(rows.map((row) => row.case)).toEqual(['ingest bundle', 'ingest load']);
    expect(rows[0]?.target).toBe('≤ 500 KB');
    expect(rows[1]?.target).toBe('≤ 2.5x');
  }, 180_000);

  it('cold start of the worker also times its mapping isolate thread, own bundle against the whole one', async () => {
    const rows = await runColdStart({ rounds: 1, functions: ['worker'] });
    expect(rows.map((row) => row.case)).toEqual([
      'worker bundle',
      'worker load',
      'worker mapping isolate start',
    ]);
    expect(rows[0]?.subject).toContain("the mapping isolate's threads");
    const data = rows[2]?.data as { subject: { median: number }; baseline: { median: number } };
    expect(data.subject.median).toBeGreaterThan(0);
    expect(data.baseline.median).toBeGreaterThan(0);
  }, 180_000);

  it('end to end reports webhooks/s and latencies per configuration', async () => {
    const { rows, runs } = await runEndToEnd({ webhooks: 1, concurrencies: [1], latenciesMs: [0] });
    expect(rows).toHaveLength(1);
    expect(runs[0]).toMatchObject({ concurrency: 1, generationLatencyMs: 0, jobs: 2, stored: 2 });
  }, 120_000);
});
