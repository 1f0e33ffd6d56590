/**
 * The local AWS emulators (./aws-emulators.ts: dynalite with its TransactWriteItems front, s3rver, fauxqs) in
 * a child process of their own, so that on a machine with more than one core they do not share the handlers'
 * event loop. Same data directory and persistence as in process; the child reports its endpoints over IPC,
 * stops when `stop()` asks, and stops by itself when this process goes away (./aws-emulators-child.ts).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AwsEmulatorOptions, AwsEmulators } from './aws-emulators';

/** What the child tells: its emulators are up (with everything but `stop`), could not start, or stopped. */
export type ChildMessage =
  | { readonly type: 'ready'; readonly emulators: Omit<AwsEmulators, 'stop'> }
  | { readonly type: 'failed'; readonly message: string }
  | { readonly type: 'stopped' };

/** What the parent tells the child. */
export type ParentMessage = { readonly type: 'stop' };

/** Options of the emulators' process. */
export interface AwsEmulatorsProcessOptions extends AwsEmulatorOptions {
  /** Longest wait for the emulators to start. @default 60_000 */
  readonly startTimeoutMs?: number;
  /** Hears that the child exited while it was meant to run (the stack cannot work without it). */
  readonly onExit?: (reason: string) => void;
}

/** The emulators running in their child process. */
export interface AwsEmulatorsProcess extends AwsEmulators {
  /** The child's process id. */
  readonly pid: number;
}

/** How long `stop()` waits for the child to stop by itself before killing it. */
const STOP_TIMEOUT_MS = 15_000;
/** The child's last stderr kept for error messages. */
const STDERR_TAIL = 4_000;

/** Starts the AWS emulators in a child process; resolves once their resources exist. */
export function startAwsEmulatorsProcess(options: AwsEmulatorsProcessOptions): Promise<AwsEmulatorsProcess> {
  const { startTimeoutMs = 60_000, onExit, ...emulatorOptions } = options;
  // The child is TypeScript, as everything here: tsx's loader (a dependency already: bin/docrelay.js, the
  // bench) loads it whether this process runs under tsx, `node bin/docrelay.js` or Jest.
  const child = fork(join(__dirname, 'aws-emulators-child.ts'), [JSON.stringify(emulatorOptions)], {
    execArgv: ['--import', pathToFileURL(require.resolve('tsx')).href],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    serialization: 'json',
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL);
  });
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal === null ? `exit code ${code}` : `signal ${signal}`));
  });
  const reasonWith = (reason: string): string => {
    const tail = stderr.trim().split('\n').slice(-5).join('\n');
    return tail === '' ? reason : `${reason}: ${tail}`;
  };

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= stopChild(child, exited);
    return stopping;
  };

  return new Promise<AwsEmulatorsProcess>((resolve, reject) => {
    let started = false;
    const timer = setTimeout(() => {
      fail(`the AWS emulators did not start within ${startTimeoutMs} ms`);
    }, startTimeoutMs);
    const fail = (reason: string): void => {
      clearTimeout(timer);
      child.off('message', onMessage);
      void stop().then(() => reject(new Error(reasonWith(reason))));
    };
    const onMessage = (message: ChildMessage): void => {
      if (message.type === 'failed') fail(`the AWS emulators did not start: ${message.message}`);
      if (message.type !== 'ready') return;
      started = true;
      clearTimeout(timer);
      child.off('message', onMessage);
      void exited.then((reason) => {
        if (stopping === undefined) onExit?.(reasonWith(`the AWS emulators' process ended (${reason})`));
      });
      resolve({ ...message.emulators, pid: child.pid ?? 0, stop });
    };
    child.on('message', onMessage);
    child.once('error', (error) => started || fail(`the AWS emulators' process failed: ${error.message}`));
    void exited.then((reason) => {
      if (!started && stopping === undefined)
        fail(`the AWS emulators' process ended (${reason}) before they started`);
    });
  });
}

/** Asks the child to stop, then kills it if it has not exited in time; resolves once it has exited. */
async function stopChild(child: ChildProcess, exited: Promise<string>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const message: ParentMessage = { type: 'stop' };
  if (child.connected) child.send(message, () => undefined);
  else child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), STOP_TIMEOUT_MS);
  });
  const outcome = await Promise.race([exited, late]);
  clearTimeout(timer);
  if (outcome !== 'late') return;
  child.kill('SIGKILL');
  await exited;
}
