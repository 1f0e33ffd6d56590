/**
 * Entry of the bundled run of the ingest handler benchmark: bench/ingest-bundle.ts builds this file with the
 * construct's esbuild options (what Lambda runs) and runs it in a fresh `node`; it measures the handler as
 * bench/ingest-overhead.ts does and prints the results as one JSON document.
 */
import { type HandlerMeasureOptions, measureLambdaHandler } from './ingest-overhead';

void (async () => {
  const options = JSON.parse(process.argv[2] ?? '{}') as HandlerMeasureOptions;
  const results = await measureLambdaHandler(options);
  process.stdout.write(JSON.stringify(results));
})().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
