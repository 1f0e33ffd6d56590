/**
 * Benchmark 3, copy to S3: a generated file streamed from the emulator's download link into the local S3
 * (s3rver) by docrelay's path (the client's download + copyToS3) against a raw baseline (the same HTTP
 * response piped into one PutObject), 1 MB, 64 MB and 512 MB. Each copy runs in a fresh process, so the
 * reported RSS growth (peak minus the RSS just before the copy) is the copy's alone.
 *
 * The emulator produces the padded file on the fly (never whole in memory) and s3rver writes to disk, so
 * both sides pay the same source and sink; s3rver also concatenates multipart parts on completion, a cost
 * S3 does not have (docrelay's path pays it, the single PUT does not).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DocgenClient, staticApiKey } from '../functions/docgen/client';
import { startEmulator } from '../local/emulator/server';
import { startAwsEmulators } from '../local/stack/aws-emulators';
import { lastJsonLine, runTsChild } from './child';
import type { CopyChildRequest, CopyChildResult } from './copy-child';
import { compare, fmt, summarize } from './harness';
import { comparisonRow, type ResultRow } from './results';

const MiB = 1024 * 1024;

/** Options of the copy benchmark. */
export interface CopyOptions {
  /** Measured rounds of each size (one copy each way per round). */
  readonly rounds: number;
  /**
   * Measured rounds of the sizes under 256 MB, which copy in about a second: more samples of the noisiest ratio
   * for little time. @default rounds
   */
  readonly smallFileRounds?: number;
  /** File sizes in bytes. @default 1 MiB, 64 MiB, 512 MiB */
  readonly sizes?: readonly number[];
  /** Overrides of copyToS3's part size and queue size (to try other values). */
  readonly partSize?: number;
  readonly queueSize?: number;
}

const label = (bytes: number): string => (bytes >= MiB ? `${bytes / MiB} MB` : `${bytes / 1024} KB`);

/** Runs benchmark 3: a throughput row and an RSS row per size. */
export async function runCopy(options: CopyOptions): Promise<ResultRow[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'docrelay-bench-copy-'));
  const aws = await startAwsEmulators({ dataDir });
  const rows: ResultRow[] = [];
  try {
    for (const size of options.sizes ?? [MiB, 64 * MiB, 512 * MiB]) {
      const rounds = size < 256 * MiB ? (options.smallFileRounds ?? options.rounds) : options.rounds;
      const apiKey = 'bench-copy-key';
      const emulator = await startEmulator({ apiKey, syntheticFileBytes: size, seed: 7 });
      try {
        const docgen = new DocgenClient({ baseUrl: emulator.url, apiKey: staticApiKey(apiKey) });
        const created = await docgen.createDocument({
          templateId: '9099',
          data: { Title: 'bench', Body: 'copy' },
        });
        const file = created.files[0];
        if (file === undefined) throw new Error('the large-file document has no file');
        const run = async (mode: CopyChildRequest['mode']): Promise<CopyChildResult> => {
          const request: CopyChildRequest = {
            mode,
            downloadUrl: file.downloadUrl,
            docgenUrl: emulator.url,
            s3Endpoint: aws.endpoints.s3,
            bucket: aws.bucket,
            key: `bench/${mode}/${size}`,
            size,
            ...(options.partSize === undefined ? {} : { partSize: options.partSize }),
            ...(options.queueSize === undefined ? {} : { queueSize: options.queueSize }),
          };
          const out = await runTsChild('bench/copy-child.ts', [JSON.stringify(request)], {
            timeoutMs: 300_000,
            nodeArgs: ['--expose-gc'],
          });
          const result = lastJsonLine(out) as CopyChildResult;
          if (result.bytes !== size) throw new Error(`${mode} copied ${result.bytes} of ${size} bytes`);
          return result;
        };
        const subjectRuns: CopyChildResult[] = [];
        const baselineRuns: CopyChildResult[] = [];
        const mbps = (r: CopyChildResult): number => r.bytes / MiB / r.seconds;
        const comparison = await compare({
          rounds,
          warmup: size >= 256 * MiB ? 0 : 1,
          subject: async () => {
            const r = await run('docrelay');
            subjectRuns.push(r);
            return mbps(r);
          },
          baseline: async () => {
            const r = await run('raw');
            baselineRuns.push(r);
            return mbps(r);
          },
        });
        rows.push(
          comparisonRow(
            {
              benchmark: 'copy',
              case: `${label(size)} throughput`,
              metric: 'MB/s, download→S3 (docrelay / raw PUT)',
              unit: 'MB/s',
              target: '≥ 0.9x',
            },
            comparison,
            (ratio) => ratio >= 0.9,
          ),
        );
        const growth = (runs: CopyChildResult[]) =>
          summarize(runs.slice(-rounds).map((r) => (r.rssPeakBytes - r.rssBeforeBytes) / MiB));
        const subjectGrowth = growth(subjectRuns);
        const baselineGrowth = growth(baselineRuns);
        const bigFile = size >= 512 * MiB;
        rows.push({
          benchmark: 'copy',
          case: `${label(size)} peak RSS growth`,
          metric: 'MB over the RSS before the copy (docrelay / raw PUT)',
          subject: `${fmt(subjectGrowth.median)} MB (max ${fmt(subjectGrowth.max)})`,
          baseline: `${fmt(baselineGrowth.median)} MB (max ${fmt(baselineGrowth.max)})`,
          ...(bigFile
            ? { target: '< 100 MB', met: subjectGrowth.max < 100, ratio: subjectGrowth.max / 100 }
            : {}),
          data: { subjectGrowth, baselineGrowth, subjectRuns, baselineRuns },
        });
      } finally {
        await emulator.stop();
      }
    }
  } finally {
    await aws.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
  return rows;
}
