/**
 * One end-to-end run for the CPU profile: started by bench/run.ts as `node --cpu-prof ... profile-e2e.ts`, so
 * the profile covers the local stack (ingest, worker, emulators) processing the webhooks.
 */
import { runEndToEnd } from './end-to-end';

const webhooks = Number(process.argv[2] ?? '20');
runEndToEnd({ webhooks, concurrencies: [4], latenciesMs: [0] })
  .then(({ runs }) => {
    process.stdout.write(`${JSON.stringify(runs[0] ?? null)}\n`);
  })
  .catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exitCode = 1;
  });
