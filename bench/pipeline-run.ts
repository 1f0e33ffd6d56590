/**
 * The pipeline benchmark in a process of its own (bench/run.ts starts it): the local stack's API and ingest run
 * in the process that measures them, so a benchmark run before it in the same process (the end-to-end one
 * sends the same handlers hundreds of webhooks) would leave their code compiled and warm, and the acks ~35%
 * faster than a fresh `npm start` gives after the same warm-up (bench/analysis.md). Prints one JSON line, the
 * run.
 */
import { type PipelineOptions, runPipeline } from './pipeline';

const options = JSON.parse(process.argv[2] ?? '{}') as PipelineOptions;
runPipeline(options).then(
  ({ run }) => {
    process.stdout.write(`${JSON.stringify(run)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
