/**
 * The worker's CPU profile: `npx tsx bench/profile-worker.ts [documents] [out.cpuprofile]` runs the worker
 * handler over the worker benchmark's set-up (bench/worker-cpu.ts) for that many documents, one after another,
 * with the V8 profiler (node:inspector) on around those documents only (start-up and module loading are
 * left out), writes the profile and prints the CPU time per document as one JSON line. bench/run.ts
 * summarises the profile with bench/cpu-profile.ts.
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';
import { prepareWorkerBench } from './worker-cpu';

const post = <T>(session: Session, method: string): Promise<T> =>
  new Promise((resolve, reject) => {
    session.post(method, (error, result) => (error === null ? resolve(result as T) : reject(error)));
  });

async function main(): Promise<void> {
  const documents = Math.min(5_000, Math.max(1, Number(process.argv[2] ?? '300')));
  const out = process.argv[3];
  const bench = await prepareWorkerBench();
  const session = new Session();
  session.connect();
  try {
    for (let i = 0; i < 20; i += 1) await bench.viaHandler();
    await post(session, 'Profiler.enable');
    await post(session, 'Profiler.start');
    const start = process.cpuUsage();
    for (let i = 0; i < documents; i += 1) await bench.viaHandler();
    const used = process.cpuUsage(start);
    const { profile } = await post<{ profile: unknown }>(session, 'Profiler.stop');
    if (out !== undefined) await writeFile(out, JSON.stringify(profile));
    process.stdout.write(
      `${JSON.stringify({ documents, cpuUsPerDocument: (used.user + used.system) / documents })}\n`,
    );
  } finally {
    session.disconnect();
    await bench.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
