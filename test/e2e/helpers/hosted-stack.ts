/**
 * A local stack in a process group of its own (./stack-host.ts), for tests that kill the whole stack at once
 * with SIGKILL: its API, its workers' child and its AWS emulators' child, as a power cut or the OOM killer
 * would, with nothing flushed and no worker finishing its batch.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readLocalSettings } from '../../../functions/commons/env';
import { repoRoot, type StackHttp, stackHttp, type TestStackOptions } from './stack';
import { waitUntil } from './wait';

/** A stack running in a process group of its own. */
export interface HostedStack extends StackHttp {
  readonly url: string;
  readonly pid: number;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  /** SIGKILL to the whole process group; resolves once no process of the group is left. */
  kill(): Promise<void>;
}

/** Options of the hosted stack: those of a test stack that survive JSON (no callbacks, no clock). */
export type HostedStackOptions = Omit<TestStackOptions, 'onLine' | 'config' | 'emulator'> & {
  readonly dataDir: string;
};

const groupAlive = (pid: number): boolean => {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Starts the stack in its own process group and waits for its `ready` line. */
export async function startHostedStack(options: HostedStackOptions): Promise<HostedStack> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--import',
      pathToFileURL(require.resolve('tsx')).href,
      join(__dirname, 'stack-host.ts'),
      JSON.stringify(options),
    ],
    { cwd: repoRoot, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const pid = child.pid;
  if (pid === undefined) throw new Error('the stack host did not start');
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const kill = async (): Promise<void> => {
    if (groupAlive(pid)) process.kill(-pid, 'SIGKILL');
    await waitUntil('the stack process group to be gone', async () => (groupAlive(pid) ? undefined : true), {
      timeoutMs: 15_000,
      intervalMs: 50,
    });
  };
  try {
    const url = await waitUntil(
      'the hosted stack to print its ready line',
      async () => {
        if (child.exitCode !== null)
          throw new Error(`the stack host exited with ${child.exitCode}: ${output}`);
        return /^ready (http:\/\/127\.0\.0\.1:\d+)$/m.exec(output)?.[1];
      },
      { timeoutMs: 60_000, intervalMs: 100, describe: () => output },
    );
    const settings = readLocalSettings(
      { PORT: '0', DOCRELAY_DATA_DIR: options.dataDir, ...options.env },
      repoRoot,
    );
    return { ...stackHttp(url, settings.secretsFile), url, pid, output: () => output, kill };
  } catch (error) {
    await kill();
    throw error;
  }
}
