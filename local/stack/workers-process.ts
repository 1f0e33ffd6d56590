/**
 * The worker side of the local stack (./workers.ts) in a child process (./workers-child.ts), so the ingest's
 * event loop serves webhooks while the workers map, render and copy on another core. The child builds its
 * own secrets and AWS clients, reports the service's URL and relays its console lines over IPC.
 */
import { join } from 'node:path';
import type { LoadedConfig } from '../../functions/config/compile';
import type { DocrelayConfig } from '../../functions/config/schema';
import { forkChild } from './child-process';
import type { PollerStopOptions } from './poller';
import type { WorkerSettings } from './workers';

/** What the workers' child reports when ready. */
export type WorkersReady = { readonly docgenUrl: string };

/** A configuration as it crosses to the child: validated, not compiled (JSON, as a Lambda's bundled config). */
export type ConfigData = { readonly config: DocrelayConfig; readonly source: string };

/** What the parent asks of the workers' child beyond `stop`. A request with an id is answered `done`. */
export type WorkersRequest =
  | { readonly type: 'start-workers' }
  | { readonly type: 'stop-workers'; readonly id: number; readonly options?: PollerStopOptions }
  | { readonly type: 'use-config'; readonly id: number; readonly config: ConfigData };

/** What the workers' child tells beyond ready, failed and stopped. */
export type WorkersNotice =
  | { readonly type: 'line'; readonly text: string }
  | { readonly type: 'done'; readonly id: number; readonly error?: string };

/**
 * How much lower the workers' scheduling priority is than this process's (a nice increment): where cores
 * are short, the OS serves the ingest and the AWS emulators first, so webhooks are answered promptly while
 * documents wait a little. Figures: docs/decisions.md, "Workers' priority".
 */
const WORKERS_NICE = 10;

/** What the workers' child gets in argv[2]: its settings, and the configuration to start with, when given. */
export type WorkersChildArgument = WorkerSettings & { readonly initialConfig?: ConfigData };

/** Options of the workers' process. */
export interface WorkersProcessOptions extends WorkerSettings {
  /** The configuration to start with (else the child reads settings.configPath, as the parent did). */
  readonly initialConfig?: ConfigData;
  /** Hears the workers' console lines. */
  readonly onLine: (text: string) => void;
  /** Hears that the child exited while it was meant to run. */
  readonly onExit?: (reason: string) => void;
  /** Longest wait for the child to be ready. @default 60_000 */
  readonly startTimeoutMs?: number;
}

/** The worker side running in its child process. */
export interface WorkersProcess {
  /** The child's process id. */
  readonly pid: number;
  /** Base URL of the Document Generation Service the workers use. */
  readonly docgenUrl: string;
  /**
   * False once the child has ended. Behind the supervisor: false from a child's unasked end until its
   * successor runs (what the local `/healthz` reports).
   */
  readonly alive: boolean;
  /** Starts the child's poller (a no-op when it runs). */
  startWorkers(): void;
  /** Stops the child's poller; resolves once its batches in flight are done. */
  stopWorkers(options?: PollerStopOptions): Promise<void>;
  /** Hands the child a configuration this process validated; resolves once its handlers are rebuilt. */
  useConfig(config: LoadedConfig): Promise<void>;
  /** Stops the child (its poller, then its emulator); resolves once it has exited. */
  stop(): Promise<void>;
}

/** Starts the worker side in a child process; resolves once its service emulator listens. */
export async function startWorkersProcess(options: WorkersProcessOptions): Promise<WorkersProcess> {
  const { onLine, onExit, startTimeoutMs = 60_000, ...settings } = options;
  if (settings.emulator?.clock !== undefined)
    throw new Error(
      'the emulator option `clock` is a function: it cannot reach the workers in their child process',
    );
  // Requests the child has not answered yet; each says what its caller hears if the child exits first.
  const pending = new Map<
    number,
    { resolve: () => void; reject: (error: Error) => void; ended: (reason: string) => void }
  >();
  const running = await forkChild<WorkersReady>({
    module: join(__dirname, 'workers-child.ts'),
    argument: JSON.stringify(settings satisfies WorkersChildArgument),
    what: 'the workers and the service emulator',
    process: "the workers' process",
    startTimeoutMs,
    // The handlers' own logs (`docrelay dev --json-logs`) go where this process's go.
    output: 'inherit',
    nice: WORKERS_NICE,
    ...(onExit === undefined ? {} : { onExit }),
    onMessage: (message) => {
      const notice = message as WorkersNotice;
      if (notice.type === 'line') onLine(notice.text);
      else if (notice.type === 'done') {
        const waiting = pending.get(notice.id);
        pending.delete(notice.id);
        if (notice.error === undefined) waiting?.resolve();
        else waiting?.reject(new Error(notice.error));
      }
    },
  });
  const { child } = running;
  let alive = true;
  void running.exited.then((reason) => {
    alive = false;
    for (const waiting of pending.values()) waiting.ended(reason);
    pending.clear();
  });
  const send = (request: WorkersRequest): void => {
    if (child.connected) child.send(request, () => undefined);
  };
  let nextId = 0;
  const ask = (request: (id: number) => WorkersRequest, whenGone: 'resolve' | 'reject'): Promise<void> => {
    const gone = (reason: string) => new Error(`the workers' process ended (${reason})`);
    if (!child.connected)
      return whenGone === 'resolve' ? Promise.resolve() : Promise.reject(gone('not connected'));
    nextId += 1;
    const id = nextId;
    return new Promise<void>((resolve, reject) => {
      const ended = (reason: string) => (whenGone === 'resolve' ? resolve() : reject(gone(reason)));
      pending.set(id, { resolve, reject, ended });
      send(request(id));
    });
  };
  return {
    pid: child.pid ?? 0,
    docgenUrl: running.ready.docgenUrl,
    get alive() {
      return alive;
    },
    startWorkers: () => send({ type: 'start-workers' }),
    // A child that is gone has no batches in flight.
    stopWorkers: (stopOptions) =>
      ask(
        (id) => ({ type: 'stop-workers', id, ...(stopOptions ? { options: stopOptions } : {}) }),
        'resolve',
      ),
    useConfig: (config) =>
      ask(
        (id) => ({ type: 'use-config', id, config: { config: config.config, source: config.source } }),
        'reject',
      ),
    stop: running.stop,
  };
}

/** How long the supervisor waits before starting a workers' process that ended again, doubling from 1 s. */
export const RESTART_DELAYS_MS = { first: 1_000, max: 30_000 } as const;

/** Options of the supervised workers' process. */
export interface SupervisedWorkersOptions extends Omit<WorkersProcessOptions, 'onExit' | 'initialConfig'> {
  /** The configuration a new process starts with: the one the stack runs now. */
  readonly currentConfig: () => ConfigData;
  /**
   * Runs once a new process is up and before it polls, when no worker is alive: the stack sends again the jobs
   * the dead process held (their messages stay invisible until their visibility timeout ends).
   */
  readonly beforeResume?: () => Promise<void>;
  /** Starts one process (tests give a fake). @default startWorkersProcess */
  readonly startProcess?: (options: WorkersProcessOptions) => Promise<WorkersProcess>;
  /** Waits between starts (tests give one they resolve). @default a timer */
  readonly pause?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function timerPause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      // Each pause of a long restart loop would otherwise leave its listener on the stack's one signal.
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * The workers' process, started again when it ends unasked, while accepted webhooks wait in the queue.
 * Failed starts back off from 1 s to 30 s; the service emulator keeps its port, so its printed URL stays
 * true. Resuming and stopping: docs/decisions.md, "Restarting the workers' process".
 */
export async function startSupervisedWorkersProcess(
  options: SupervisedWorkersOptions,
): Promise<WorkersProcess> {
  const {
    currentConfig,
    beforeResume,
    onLine,
    startProcess = startWorkersProcess,
    pause = timerPause,
    ...settings
  } = options;
  let polling = false;
  const stopping = new AbortController();
  /** True from a process's unasked end until its successor runs. */
  let down = false;
  /** Counts the unasked ends: a restart that a later end overtook leaves the rest to the later one. */
  let ends = 0;
  /** The restart in flight, which `stop()` waits for. */
  let restarting: Promise<void> = Promise.resolve();
  const embedded = settings.settings.docgenBaseUrl === undefined;
  const start = (port?: number): Promise<WorkersProcess> =>
    startProcess({
      ...settings,
      ...(port === undefined ? {} : { emulator: { ...settings.emulator, port } }),
      initialConfig: currentConfig(),
      onLine,
      onExit: (reason) => {
        restarting = restart(reason);
      },
    });
  let current = await start();
  const docgenUrl = current.docgenUrl;
  const port = embedded ? Number(new URL(docgenUrl).port) : undefined;

  async function restart(reason: string): Promise<void> {
    down = true;
    ends += 1;
    const end = ends;
    const overtaken = (): boolean => stopping.signal.aborted || end !== ends;
    let why = reason;
    for (
      let delay: number = RESTART_DELAYS_MS.first;
      !overtaken();
      delay = Math.min(2 * delay, RESTART_DELAYS_MS.max)
    ) {
      onLine(`error: ${why}; starting it again in ${delay / 1000} s`);
      await pause(delay, stopping.signal);
      if (overtaken()) return;
      try {
        current = await start(port);
      } catch (error) {
        why = error instanceof Error ? error.message : String(error);
        continue;
      }
      // Stopping: `stop()` stops the process it started, as the current one.
      if (overtaken()) return;
      down = false;
      await beforeResume?.().catch((error: unknown) =>
        onLine(`error: ${error instanceof Error ? error.message : String(error)}`),
      );
      // Died while its predecessor's jobs were being released: its own restart carries on.
      if (overtaken() || !current.alive) return;
      if (polling) current.startWorkers();
      onLine(`the workers' process runs again (pid ${current.pid})`);
      return;
    }
  }

  return {
    get pid() {
      return current.pid;
    },
    docgenUrl,
    get alive() {
      return !down && current.alive;
    },
    startWorkers: () => {
      polling = true;
      current.startWorkers();
    },
    stopWorkers: (stopOptions) => {
      polling = false;
      return current.stopWorkers(stopOptions);
    },
    // A process that is down takes the configuration when it starts again (currentConfig).
    useConfig: (config) => (down ? Promise.resolve() : current.useConfig(config)),
    stop: async () => {
      stopping.abort();
      // A start in flight ends first, so that the process it started is the one stopped here.
      await restarting;
      await current.stop();
    },
  };
}
