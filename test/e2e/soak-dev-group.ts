/**
 * `docrelay dev` (what `npm start` runs) in a process group of its own, for the crash soak: its API, its
 * workers' child and its AWS emulators' child, killed at once with SIGKILL to the group, as a power cut or the
 * OOM killer would, with nothing flushed and no worker finishing its batch.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { readLocalSettings } from '../../functions/commons/env';
import { repoRoot, type StackHttp, stackHttp } from './helpers/stack';
import { waitUntil } from './helpers/wait';

/** A running `docrelay dev` group. */
export interface DevGroup extends StackHttp {
  readonly url: string;
  /** Everything it printed so far. */
  output(): string;
  /** SIGKILL to the whole process group; resolves once no process of the group is left. */
  kill(): Promise<void>;
}

const groupAlive = (pid: number): boolean => {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Starts `node bin/docrelay.js dev` on a free port in its own process group; waits for `ready at`. */
export async function startDevGroup(
  dataDir: string,
  env: Readonly<Record<string, string>>,
): Promise<DevGroup> {
  const childEnv = { PORT: '0', DOCRELAY_DATA_DIR: dataDir, ...env };
  const child: ChildProcess = spawn(process.execPath, [join(repoRoot, 'bin/docrelay.js'), 'dev'], {
    cwd: repoRoot,
    env: { ...process.env, ...childEnv },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('docrelay dev did not start');
  let output = '';
  const hear = (chunk: Buffer) => {
    output += chunk.toString('utf8');
  };
  child.stdout?.on('data', hear);
  child.stderr?.on('data', hear);
  const kill = async (): Promise<void> => {
    if (groupAlive(pid)) process.kill(-pid, 'SIGKILL');
    await waitUntil(
      'the docrelay dev process group to be gone',
      async () => (groupAlive(pid) ? undefined : true),
      {
        timeoutMs: 15_000,
        intervalMs: 50,
      },
    );
  };
  try {
    const url = await waitUntil(
      '`docrelay dev` to print its ready line',
      async () => {
        if (child.exitCode !== null) throw new Error(`docrelay dev exited with ${child.exitCode}: ${output}`);
        return /ready at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
      },
      { timeoutMs: 60_000, intervalMs: 100, describe: () => output },
    );
    const settings = readLocalSettings(childEnv, repoRoot);
    return { ...stackHttp(url, settings.secretsFile), url, output: () => output, kill };
  } catch (error) {
    await kill();
    throw error;
  }
}
