/**
 * Benchmark 4, cold start: each Lambda bundle built with the construct's esbuild settings (minified, CJS,
 * platform node, everything bundled, the AWS SDK included; target node20 here so this Node can load it),
 * its size, and the time a fresh `node` process takes to load it (the handler module builds its runtime at
 * load: that is the cold start's init) against an empty bundle. Also which packages make up the bytes.
 * The bundles are those of a deployment with the construct's defaults: no tracing (no X-Ray SDK bundled) and
 * no source maps (no map written, no `--enable-source-maps`); `DOCRELAY_BENCH_SOURCE_MAPS=true` measures
 * them with source maps instead.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { BuildOptions, Metafile } from 'esbuild';
import { parse as parseYaml } from 'yaml';
import { LAMBDA_ENV } from '../functions/config/lambda-env';
import { ISOLATE_MARKER } from '../functions/mapping/isolate';
import { lastJsonLine, runNodeChild } from './child';
import { compare } from './harness';
import { comparisonRow, type ResultRow } from './results';

const ROOT = resolve(__dirname, '..');

/** The Lambda entry points. */
export const FUNCTIONS = ['ingest', 'worker', 'jobs-api', 'event-ingest', 'reconciler'] as const;

/** Options of the cold-start benchmark. */
export interface ColdStartOptions {
  readonly rounds: number;
  readonly functions?: readonly (typeof FUNCTIONS)[number][];
  /** Where bundles are written. @default a temporary directory, removed afterwards */
  readonly outDir?: string;
}

/** The bundle size target of the ingest function, in bytes (500 KB, issue 17). */
export const INGEST_BUNDLE_TARGET_BYTES = 500 * 1024;

interface BundleSettings {
  readonly options: (entry: string, outfile: string) => BuildOptions;
  readonly source: string;
  /** NODE_OPTIONS the construct sets on every function (none without source maps). */
  readonly nodeOptions: string;
}

/** Source maps on (the construct's `sourceMaps`), for a run that measures their cost. */
const SOURCE_MAPS = process.env.DOCRELAY_BENCH_SOURCE_MAPS === 'true';

/**
 * The esbuild options of the CDK construct (lib/docrelay-function.ts), when it exports them; else the same
 * settings written out here. The target is lowered to node20 (this machine's Node) for loading.
 */
async function bundleSettings(configFile: string): Promise<BundleSettings> {
  const fallback: BundleSettings = {
    source: 'bench/cold-start.ts (construct options not found)',
    nodeOptions: SOURCE_MAPS ? '--enable-source-maps' : '',
    options: (entry, outfile) => ({
      entryPoints: [entry],
      outfile,
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      minify: true,
      sourcemap: SOURCE_MAPS,
      sourcesContent: false,
      keepNames: false,
      mainFields: ['module', 'main'],
      logLevel: 'warning',
    }),
  };
  try {
    const lib: unknown = await import('../lib/docrelay-function');
    if (
      typeof lib === 'object' &&
      lib !== null &&
      'docrelayBundling' in lib &&
      typeof lib.docrelayBundling === 'function' &&
      'esbuildBuildOptions' in lib &&
      typeof lib.esbuildBuildOptions === 'function' &&
      'functionNodeOptions' in lib &&
      typeof lib.functionNodeOptions === 'function'
    ) {
      const options = { sourceMaps: SOURCE_MAPS };
      const bundling: unknown = lib.docrelayBundling(configFile, options);
      const nodeOptions: unknown = lib.functionNodeOptions(options);
      const toOptions = lib.esbuildBuildOptions as (
        b: unknown,
        entry: string,
        outfile: string,
      ) => BuildOptions;
      return {
        source: `lib/docrelay-function.ts esbuildBuildOptions(docrelayBundling(...)), target node20${SOURCE_MAPS ? ', source maps' : ''}`,
        nodeOptions: typeof nodeOptions === 'string' ? nodeOptions : '',
        options: (entry, outfile) => ({
          ...toOptions(bundling, entry, outfile),
          target: 'node20',
          metafile: true,
        }),
      };
    }
  } catch {
    // The construct is being written; the fallback mirrors its settings.
  }
  return fallback;
}

/** The Lambda environment with dummy values, as the construct sets it. */
function lambdaEnv(configPath: string, name: string, nodeOptions: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    NODE_OPTIONS: nodeOptions,
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIDCOLDSTART',
    AWS_SECRET_ACCESS_KEY: 'cold-start',
    AWS_LAMBDA_FUNCTION_NAME: `docrelay-${name}`,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256',
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
    POWERTOOLS_SERVICE_NAME: `docrelay-${name}`,
    POWERTOOLS_METRICS_NAMESPACE: 'docrelay',
    POWERTOOLS_LOG_LEVEL: 'INFO',
    [LAMBDA_ENV.configPath]: configPath,
    [LAMBDA_ENV.tableName]: 'docrelay-jobs',
    [LAMBDA_ENV.queueUrl]: 'https://sqs.us-east-1.amazonaws.com/000000000000/docrelay-jobs',
    [LAMBDA_ENV.dlqUrl]: 'https://sqs.us-east-1.amazonaws.com/000000000000/docrelay-jobs-dlq',
    [LAMBDA_ENV.bucket]: 'docrelay-documents',
    [LAMBDA_ENV.eventBusName]: 'default',
    [LAMBDA_ENV.sealingSecretName]: 'docrelay/sealing-key',
    [LAMBDA_ENV.maxReceiveCount]: '5',
    [LAMBDA_ENV.leaseSeconds]: '900',
  };
}

// Loads the bundle and prints the in-process require time; the parent also times spawn to exit.
const LOADER = `
const start = performance.now();
const mod = require(process.argv[1]);
if (typeof mod.handler !== 'function') { console.error('no handler export'); process.exit(2); }
process.stdout.write(JSON.stringify({ requireMs: performance.now() - start, uptimeMs: process.uptime() * 1000 }));
`;

interface LoadSample {
  /** Spawn to exit of `node` loading the bundle: Node's own start plus the module's. */
  readonly processMs: number;
  /** `require(bundle)` alone, inside the process. */
  readonly requireMs: number;
}

function loadOnce(bundle: string, env: NodeJS.ProcessEnv): Promise<LoadSample> {
  return new Promise((resolveLoad, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, ['-e', LOADER, bundle], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const processMs = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0) {
        reject(new Error(`loading ${bundle} exited ${code}: ${err.slice(0, 2000)}`));
        return;
      }
      const parsed = JSON.parse(out) as { requireMs: number };
      resolveLoad({ processMs, requireMs: parsed.requireMs });
    });
  });
}

// Starts one mapping isolate thread on a script, as functions/mapping/isolate.ts does, and prints the time
// from `new Worker` to its ready message.
const ISOLATE_STARTER = `
const { Worker } = require('node:worker_threads');
const start = performance.now();
const worker = new Worker(process.argv[1], {
  workerData: { ${JSON.stringify(ISOLATE_MARKER)}: true },
  resourceLimits: { maxOldGenerationSizeMb: 256 },
});
worker.on('message', (reply) => {
  if (reply.ready !== true) return;
  process.stdout.write(JSON.stringify({ readyMs: performance.now() - start }));
  void worker.terminate();
});
`;

async function isolateStartOnce(script: string, env: NodeJS.ProcessEnv): Promise<number> {
  const out = await runNodeChild(['-e', ISOLATE_STARTER, script], {
    env,
    timeoutMs: 30_000,
    label: `an isolate thread on ${script}`,
  });
  return (lastJsonLine(out) as { readyMs: number }).readyMs;
}

/** Output bytes per package (node_modules/<name>, or the repository folder), largest first. */
export function bytesByPackage(metafile: Metafile, outfile: string): Array<{ name: string; bytes: number }> {
  const output = Object.entries(metafile.outputs).find(([path]) => resolve(path) === resolve(outfile))?.[1];
  const totals = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output?.inputs ?? {})) {
    const at = input.lastIndexOf('node_modules/');
    let name: string;
    if (at >= 0) {
      const parts = input.slice(at + 'node_modules/'.length).split('/');
      name = parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1] ?? ''}` : (parts[0] ?? input);
    } else {
      name = input.split('/').slice(0, 2).join('/');
    }
    totals.set(name, (totals.get(name) ?? 0) + bytesInOutput);
  }
  return [...totals.entries()].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes);
}

/** Runs benchmark 4: one size row and one load-time row per function. */
export async function runColdStart(options: ColdStartOptions): Promise<ResultRow[]> {
  const esbuild = await import('esbuild');
  const dir = options.outDir ?? (await mkdtemp(join(tmpdir(), 'docrelay-bench-cold-')));
  await mkdir(dir, { recursive: true });
  try {
    // The construct bundles the validated configuration as JSON beside the code.
    const configPath = join(dir, 'docrelay.config.json');
    const yamlText = await readFile(join(ROOT, 'config', 'docrelay.yaml'), 'utf8');
    await writeFile(configPath, JSON.stringify(parseYaml(yamlText)));
    const settings = await bundleSettings(configPath);

    const emptyEntry = join(dir, 'empty-handler.ts');
    await writeFile(emptyEntry, 'export const handler = async (): Promise<unknown> => ({});\n');
    const emptyOut = join(dir, 'empty', 'index.js');
    await esbuild.build({ ...settings.options(emptyEntry, emptyOut), metafile: true });
    const emptyBytes = (await stat(emptyOut)).size;

    // The files shipped beside every bundle: the modules loaded on some requests only (the XML parser), not
    // in the bundle's bytes or its load, so reported beside them; and the mapping isolate's own bundle, which
    // its threads load (the worker's row below measures what that saves).
    const lib = await import('../lib/docrelay-function');
    const { MAPPING_ISOLATE_FILE } = await import('../functions/config/lambda-env');
    const besideDir = join(dir, 'beside');
    let lazyBytes = 0;
    let isolateBytes = 0;
    for (const beside of lib.besideBundles()) {
      await esbuild.build(lib.besideBundleOptions(beside, besideDir, 'node20'));
      const bytes = (await stat(join(besideDir, beside.file))).size;
      if (beside.file === MAPPING_ISOLATE_FILE) isolateBytes = bytes;
      else lazyBytes += bytes;
    }
    const isolateScript = join(besideDir, MAPPING_ISOLATE_FILE);
    const beside =
      ` (+ ${(lazyBytes / 1024).toFixed(0)} KB beside it, loaded on first use: ${lib.LAZY_MODULES.join(', ')};` +
      ` + ${(isolateBytes / 1024).toFixed(0)} KB, the mapping isolate's threads)`;

    const rows: ResultRow[] = [];
    for (const name of options.functions ?? FUNCTIONS) {
      const outfile = join(dir, name, 'index.js');
      const result = await esbuild.build({
        ...settings.options(join(ROOT, 'functions', 'handlers', name, 'handler.ts'), outfile),
        metafile: true,
      });
      const bytes = (await stat(outfile)).size;
      const top = bytesByPackage(result.metafile, outfile).slice(0, 8);
      const isIngest = name === 'ingest';
      rows.push({
        benchmark: 'cold-start',
        case: `${name} bundle`,
        metric: 'minified bytes (no source map)',
        subject: `${(bytes / 1024).toFixed(0)} KB${beside}`,
        // For the ingest the ratio is against the 500 KB target; the empty bundle is shown for scale.
        baseline: `${(emptyBytes / 1024).toFixed(1)} KB (empty)${isIngest ? '; ratio vs 500 KB' : ''}`,
        ...(isIngest
          ? {
              target: '≤ 500 KB',
              met: bytes <= INGEST_BUNDLE_TARGET_BYTES,
              ratio: bytes / INGEST_BUNDLE_TARGET_BYTES,
            }
          : {}),
        data: { bytes, lazyBytes, isolateBytes, emptyBytes, topPackages: top, settings: settings.source },
      });

      const env = lambdaEnv(configPath, name, settings.nodeOptions);
      const samples: LoadSample[] = [];
      const emptySamples: LoadSample[] = [];
      const comparison = await compare({
        rounds: options.rounds,
        subject: async () => {
          const sample = await loadOnce(outfile, env);
          samples.push(sample);
          return sample.processMs;
        },
        baseline: async () => {
          const sample = await loadOnce(emptyOut, env);
          emptySamples.push(sample);
          return sample.processMs;
        },
      });
      const requireMedian = [...samples.map((s) => s.requireMs)].sort((a, b) => a - b)[
        Math.floor(samples.length / 2)
      ];
      rows.push(
        comparisonRow(
          {
            benchmark: 'cold-start',
            case: `${name} load`,
            metric: `fresh node process, spawn→exit (require alone ≈ ${(requireMedian ?? 0).toFixed(0)} ms)`,
            unit: 'ms',
            ...(isIngest ? { target: '≤ 2.5x' } : {}),
          },
          comparison,
          isIngest ? (ratio) => ratio <= 2.5 : undefined,
        ),
      );
      if (name === 'worker') {
        // The mapping isolate's threads start on a container's first mapping: loading their own bundle
        // against loading the whole worker bundle, as they did before it was built beside it.
        const started = await compare({
          rounds: options.rounds,
          subject: () => isolateStartOnce(isolateScript, env),
          baseline: () => isolateStartOnce(outfile, env),
        });
        rows.push(
          comparisonRow(
            {
              benchmark: 'cold-start',
              case: 'worker mapping isolate start',
              metric: `one isolate thread in a fresh process, new Worker → ready: its own ${(isolateBytes / 1024).toFixed(0)} KB bundle vs the whole worker bundle`,
              unit: 'ms',
            },
            started,
          ),
        );
      }
    }
    return rows;
  } finally {
    if (options.outDir === undefined) await rm(dir, { recursive: true, force: true });
  }
}
