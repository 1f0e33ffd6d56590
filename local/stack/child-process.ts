/**
 * Both sides of the local stack's child processes: the parent forks a TypeScript module with tsx's loader
 * and waits for `ready` over IPC; the child stops when told, on SIGTERM, or when the IPC channel closes.
 * The child ignores SIGINT (Ctrl-C reaches the whole group), so the parent decides the order of stopping.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { getPriority, setPriority } from 'node:os';
import { pathToFileURL } from 'node:url';

/** What every child tells about itself: it started (with what it reports), could not start, or stopped. */
export type ChildLifeMessage<Ready extends object> =
  | ({ readonly type: 'ready' } & Ready)
  | { readonly type: 'failed'; readonly message: string }
  | { readonly type: 'stopped' };

/** What the parent tells every child. */
export type StopMessage = { readonly type: 'stop' };

/** Options of `forkChild`. */
export interface ForkChildOptions {
  /** The child's module (a .ts file, run through tsx). */
  readonly module: string;
  /** The child's one argument (JSON). */
  readonly argument: string;
  /** What the child runs, for messages: `${what} did not start: …`. */
  readonly what: string;
  /** The process, for messages: `${process} ended (…)`. */
  readonly process: string;
  /** Longest wait for the `ready` message. */
  readonly startTimeoutMs: number;
  /** Where the child's stdout goes (its stderr is kept for error messages, and passed on with 'inherit'). */
  readonly output: 'ignore' | 'inherit';
  /** Added to this process's nice value for the child's (higher yields the CPU to others). @default 0 */
  readonly nice?: number;
  /** Hears that the child exited while it was meant to run. */
  readonly onExit?: (reason: string) => void;
  /** Hears the child's messages other than ready, failed and stopped, from the start. */
  readonly onMessage?: (message: unknown) => void;
}

/** A child that reported ready. */
export interface RunningChild<Ready> {
  readonly child: ChildProcess;
  /** What its `ready` message reported. */
  readonly ready: Ready;
  /** Resolves with the reason once the child has exited. */
  readonly exited: Promise<string>;
  /** Asks the child to stop, killing it if it takes too long; resolves once it has exited. */
  stop(): Promise<void>;
}

/** How long `stop()` waits for a child to stop by itself before killing it. */
const STOP_TIMEOUT_MS = 15_000;
/** The child's last stderr kept for error messages. */
const STDERR_TAIL = 4_000;
/** Longest a child's stop may take before it exits anyway (under the parent's STOP_TIMEOUT_MS). */
const CHILD_STOP_BOUND_MS = 10_000;

/** Forks a child module; resolves once it reports ready, rejects (the child gone) if it does not. */
export function forkChild<Ready extends object>(options: ForkChildOptions): Promise<RunningChild<Ready>> {
  // tsx's loader (a dependency already: bin/docrelay.js, the bench) loads the TypeScript child whether this
  // process runs under tsx, `node bin/docrelay.js` or Jest.
  const child = fork(options.module, [options.argument], {
    execArgv: ['--import', pathToFileURL(require.resolve('tsx')).href],
    stdio: ['ignore', options.output, 'pipe', 'ipc'],
    serialization: 'json',
  });
  if (options.nice !== undefined && child.pid !== undefined) {
    try {
      setPriority(child.pid, Math.min(19, getPriority() + options.nice));
    } catch {
      // A priority the system refuses changes nothing but the scheduling: the child runs as it is.
    }
  }
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL);
    if (options.output === 'inherit') process.stderr.write(chunk);
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

  return new Promise<RunningChild<Ready>>((resolve, reject) => {
    let started = false;
    const timer = setTimeout(() => {
      fail(`${options.what} did not start within ${options.startTimeoutMs} ms`);
    }, options.startTimeoutMs);
    const fail = (reason: string): void => {
      clearTimeout(timer);
      void stop().then(() => reject(new Error(reasonWith(reason))));
    };
    child.on('message', (message: ChildLifeMessage<Ready> | { type?: unknown }) => {
      if (message.type === 'failed' && !started)
        fail(`${options.what} did not start: ${(message as { message: string }).message}`);
      else if (message.type === 'ready' && !started) {
        started = true;
        clearTimeout(timer);
        void exited.then((reason) => {
          if (stopping === undefined) options.onExit?.(reasonWith(`${options.process} ended (${reason})`));
        });
        const { type: _type, ...ready } = message as { type: 'ready' } & Ready;
        resolve({ child, ready: ready as unknown as Ready, exited, stop });
      } else if (message.type !== 'stopped') options.onMessage?.(message);
    });
    child.once('error', (error) => started || fail(`${options.process} failed: ${error.message}`));
    void exited.then((reason) => {
      if (!started && stopping === undefined)
        fail(`${options.process} ended (${reason}) before it was ready`);
    });
  });
}

/** Asks the child to stop, then kills it if it has not exited in time; resolves once it has exited. */
async function stopChild(child: ChildProcess, exited: Promise<string>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const message: StopMessage = { type: 'stop' };
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

/** Sends a message to the parent, if it is still there. */
export function tellParent(message: object): void {
  if (process.connected) process.send?.(message);
}

/** What a child module runs: how to start it, what to report, how to stop it, what else it hears. */
export interface ChildService<Started, Ready extends object> {
  start(): Promise<Started>;
  /** The `ready` message's content. */
  ready(started: Started): Ready;
  stop(started: Started): Promise<void>;
  /** Hears the parent's messages other than `stop`, once started. */
  onMessage?(started: Started, message: unknown): void;
}

/**
 * The child's side: starts the service, reports `ready` (or `failed`, then exits 1), and stops it (bounded)
 * when the parent says `stop`, on SIGTERM, or when the IPC channel closes; exits once stopped.
 */
export function serveParent<Started, Ready extends object>(service: ChildService<Started, Ready>): void {
  // The warnings bin/docrelay.js keeps off the console, kept off it here too (a child's stderr may reach it).
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    const text = `${warning.name}: ${warning.message}`;
    if (!text.includes('NodeVersionSupportWarning') && warning.name !== 'ExperimentalWarning')
      process.stderr.write(`${text}\n`);
  });
  const starting = service.start();
  let stopping: Promise<void> | undefined;
  const stop = (code: number): Promise<void> => {
    stopping ??= (async () => {
      // Bounded: a server that hangs in close must not keep the process (and its ports) alive.
      setTimeout(() => process.exit(code), CHILD_STOP_BOUND_MS).unref();
      await starting.then(
        (started) => service.stop(started),
        () => undefined,
      );
      tellParent({ type: 'stopped' });
      process.exit(code);
    })();
    return stopping;
  };
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => void stop(0));
  process.on('disconnect', () => void stop(0));
  process.on('message', (message: StopMessage | { type?: unknown }) => {
    if (message.type === 'stop') void stop(0);
    else if (stopping === undefined)
      void starting.then(
        (started) => service.onMessage?.(started, message),
        () => undefined,
      );
  });
  starting.then(
    (started) => {
      if (stopping === undefined) tellParent({ type: 'ready', ...service.ready(started) });
    },
    (error: unknown) => {
      tellParent({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
      void stop(1);
    },
  );
}
