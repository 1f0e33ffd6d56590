/**
 * The pipeline and worker-CPU benchmarks, smoke-sized, report their rows. Loopback
 * only; timings are never asserted.
 */
import { type PipelineRun, pipelineRows, runPipelineIsolated } from '../../bench/pipeline';
import { runWorkerCpu } from '../../bench/worker-cpu';

describe('the pipeline and worker benchmarks, smoke-sized', () => {
  it('the pipeline, in a process of its own, stores every webhook and quotes n8n beside its rows without a ratio', async () => {
    const { rows, run } = await runPipelineIsolated({
      webhooks: 4,
      warmup: 1,
      inFlight: 2,
      timeoutMs: 60_000,
    });
    expect(run).toMatchObject({ accepted: 4, jobs: 4, storedFiles: 4, failedJobs: 0, workerConcurrency: 4 });
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row.baseline).toContain('not this run');
      expect(row.ratio).toBeUndefined();
    }
  }, 120_000);

  it('quotes n8n measured after the same warm-up as the run: 20 webhooks, or 300 for a warm stack', () => {
    const run: PipelineRun = {
      webhooks: 300,
      warmup: 20,
      inFlight: 10,
      workerConcurrency: 4,
      accepted: 300,
      jobs: 300,
      storedFiles: 300,
      failedJobs: 0,
      seconds: 5,
      documentsPerSecond: 60,
      ackP50Ms: 38,
      ackP99Ms: 75,
      endToEndP50Ms: 2400,
      endToEndP99Ms: 3500,
    };
    const fresh = pipelineRows(run);
    const warm = pipelineRows({ ...run, warmup: 300 });
    expect(fresh[0]?.case).toContain('after 20 warm-up webhooks');
    expect(warm[0]?.case).toContain('after 300 warm-up webhooks');
    for (const row of fresh) expect(row.baseline).toContain('n8n 1.123.81 after 20 warm-up webhooks');
    for (const row of warm) expect(row.baseline).toContain('n8n 1.123.81 after 300 warm-up webhooks');
    expect(fresh[0]?.baseline).not.toEqual(warm[0]?.baseline);
  });

  it('the worker CPU rows compare both subjects with the bare relay, and the profile names packages', async () => {
    const rows = await runWorkerCpu({ rounds: 1, batchMs: 1, profileDocuments: 2 });
    expect(rows.map((row) => row.case.replace(/, 1 file of \d+ B/, ''))).toEqual([
      'processJob (core + adapters + SDK)',
      'Lambda handler (middy, Powertools, SQS record)',
      'CPU profile of the Lambda handler, 2 documents (main thread, self time)',
    ]);
    expect(Number.isFinite(rows[0]?.ratio)).toBe(true);
    expect(Number.isFinite(rows[1]?.ratio)).toBe(true);
  }, 180_000);
});
