/**
 * The ingest handler as Lambda runs it: bench/ingest-handler-entry.ts bundled with the construct's esbuild
 * options (lib/docrelay-function.ts: minified, the SDK's ES module builds, the credential and tracing
 * aliases; target node20 so this Node loads it), then run in a fresh `node` that measures the handler against
 * the floor. The bundle is written under node_modules/.cache so that it resolves the payload fixtures' package.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { docrelayBundling, esbuildBuildOptions } from '../lib/docrelay-function';
import { runNodeChild } from './child';
import type { PayloadSize } from './fixtures/payloads';
import type { Comparison } from './harness';
import { type HandlerMeasureOptions, handlerRow, INGEST_BENCH_CONFIG } from './ingest-overhead';
import type { ResultRow } from './results';

const ROOT = resolve(__dirname, '..');
const OUT_DIR = join(ROOT, 'node_modules', '.cache', 'docrelay-bench');

/** Builds the bundle and returns its path. */
async function buildBundle(): Promise<string> {
  await mkdir(OUT_DIR, { recursive: true });
  const outfile = join(OUT_DIR, 'ingest-handler.js');
  // The construct's config copy step is not run: the benchmark passes its own configuration's path.
  const unusedConfig = join(OUT_DIR, 'unused-config.json');
  await writeFile(unusedConfig, '{}');
  await build({
    ...esbuildBuildOptions(
      docrelayBundling(unusedConfig),
      join(__dirname, 'ingest-handler-entry.ts'),
      outfile,
    ),
    target: 'node20',
    // The fixtures' require.resolve is meant to run from the bundle's folder: esbuild's warning about it is noise.
    logLevel: 'error',
  });
  return outfile;
}

/** Measures the bundled handler; one row per size, the 20 KB one with issue 17's target. */
export async function runBundledIngestHandler(
  options: HandlerMeasureOptions & { readonly timeoutMs?: number },
): Promise<ResultRow[]> {
  const file = await buildBundle();
  const { timeoutMs, ...measure } = options;
  const output = await runNodeChild([file, JSON.stringify({ configPath: INGEST_BENCH_CONFIG, ...measure })], {
    env: { PATH: process.env.PATH, POWERTOOLS_METRICS_DISABLED: 'true', AWS_REGION: 'us-east-1' },
    timeoutMs: timeoutMs ?? 300_000,
    label: 'the bundled ingest benchmark',
  });
  const results = JSON.parse(output) as Array<{ size: PayloadSize; bytes: number; run: Comparison }>;
  return results.map((result) => handlerRow(result, 'Lambda bundle', true));
}
