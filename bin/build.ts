/**
 * `npm run build`: bundles each Lambda function exactly as the CDK construct does, with the files the
 * construct puts beside it, into dist/bundles/<function>/ and prints each bundle's size: what `cdk deploy`
 * uploads, without CDK, for the benchmarks and anyone inspecting a bundle.
 */
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { build } from 'esbuild';
import { readLocalSettings } from '../functions/commons/env';
import { loadConfigFile } from '../functions/config/load';
import {
  BUNDLED_CONFIG_FILE,
  besideBundleOptions,
  besideBundles,
  docrelayBundling,
  esbuildBuildOptions,
  FUNCTION_NAMES,
  functionEntry,
  PROJECT_ROOT,
} from '../lib/docrelay-function';

async function main(): Promise<void> {
  const settings = readLocalSettings();
  const config = await loadConfigFile(settings.configPath);
  const out = join(PROJECT_ROOT, 'dist', 'bundles');
  await rm(out, { recursive: true, force: true });
  const bundling = docrelayBundling(join(out, BUNDLED_CONFIG_FILE));
  for (const name of FUNCTION_NAMES) {
    const dir = join(out, name);
    await mkdir(dir, { recursive: true });
    const outfile = join(dir, 'index.js');
    await build(esbuildBuildOptions(bundling, functionEntry(name), outfile));
    await writeFile(join(dir, BUNDLED_CONFIG_FILE), `${JSON.stringify(config.config)}\n`);
    // What the construct builds beside the bundle after it (lazily loaded packages, the mapping isolate).
    for (const beside of besideBundles()) await build(besideBundleOptions(beside, dir));
    const { size } = await stat(outfile);
    process.stdout.write(
      `${relative(PROJECT_ROOT, outfile).padEnd(36)} ${(size / 1024).toFixed(1).padStart(8)} KiB\n`,
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`build: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}\n`);
  process.exitCode = 1;
});
