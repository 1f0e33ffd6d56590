/**
 * Python moto's `moto_server` on a free loopback port, for tests against an independent AWS implementation.
 * It must be on PATH: when it is not, starting fails with a message, never a silent skip.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

/** A running moto_server. */
export interface MotoServer {
  /** Its endpoint, http://127.0.0.1:PORT. */
  readonly url: string;
  stop(): Promise<void>;
}

/** How long moto_server may take to answer its first request, and how often it is asked. */
const READY_TIMEOUT_MS = 30_000;
const READY_POLL_MS = 200;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

/** Starts moto_server and resolves once it answers (bounded by READY_TIMEOUT_MS). */
export async function startMotoServer(): Promise<MotoServer> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = `${stderr}${chunk.toString('utf8')}`.slice(-4000);
  });
  const exited = new Promise<Error>((resolve) => {
    child.once('error', (error) => resolve(new Error(`cannot start moto_server: ${error.message}`)));
    child.once('exit', (code) => resolve(new Error(`moto_server exited with ${code}: ${stderr.trim()}`)));
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const ready = await Promise.race([exited, answers(`${url}/moto-api/data.json`)]);
    if (ready instanceof Error) throw ready;
    if (ready) return { url, stop: () => stop(child) };
    if (Date.now() > deadline) {
      await stop(child);
      throw new Error(`moto_server did not answer on ${url} within ${READY_TIMEOUT_MS} ms: ${stderr.trim()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await gone;
  clearTimeout(timer);
}
