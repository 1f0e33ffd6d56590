/**
 * `docrelay dev` (what `npm start` runs) as a real child process: started with a data directory and PORT=0,
 * ready once it prints its `ready at <url>` line, stopped with a signal.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { join } from 'node:path';
import { type LocalEndpoints, readEndpoints } from '../../../local/state-files';
import { repoRoot } from './stack';
import { waitUntil } from './wait';

/** A running `docrelay dev`. */
export interface DevProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** Base URL it printed. */
  readonly url: string;
  /** Where its emulators listen (`<dataDir>/endpoints.json`). */
  readonly endpoints: LocalEndpoints;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  /** Resolves once it has exited by itself or by a signal: its exit code (null when killed) and the signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends a signal and resolves with the exit code (null when killed by the signal) and the signal. */
  stop(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts `node bin/docrelay.js dev` (with `args` after `dev`) on a free port with the given environment; waits
 * for `ready at`.
 */
export async function startDevProcess(
  dataDir: string,
  env: Readonly<Record<string, string>> = {},
  args: readonly string[] = [],
): Promise<DevProcess> {
  const child = spawn(process.execPath, [join(repoRoot, 'bin/docrelay.js'), 'dev', ...args], {
    cwd: repoRoot,
    env: { ...process.env, PORT: '0', DOCRELAY_DATA_DIR: dataDir, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  try {
    const url = await waitUntil(
      '`docrelay dev` to print its ready line',
      async () => {
        if (child.exitCode !== null) throw new Error(`docrelay dev exited with ${child.exitCode}: ${output}`);
        return /ready at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
      },
      { timeoutMs: 30_000, intervalMs: 100, describe: () => output },
    );
    const endpoints = await waitUntil('endpoints.json', async () => {
      const found = await readEndpoints(dataDir);
      return found?.api === url ? found : undefined;
    });
    return {
      child,
      url,
      endpoints,
      output: () => output,
      exited,
      stop: async (signal) => {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal);
        return exited;
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw error;
  }
}
