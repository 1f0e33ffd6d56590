/**
 * The supervisor of the local workers' process (startSupervisedWorkersProcess), with fake processes: what it
 * starts, in which order it resumes, and what it leaves when processes die at awkward moments. The real child
 * killed with SIGKILL: test/e2e/local-stack-worker-child.test.ts.
 */
import {
  type ConfigData,
  type SupervisedWorkersOptions,
  startSupervisedWorkersProcess,
  type WorkersProcess,
  type WorkersProcessOptions,
} from '../../../../local/stack/workers-process';

/** A process the fake starter made: what was asked of it, and a way to make it die. */
interface FakeProcess extends WorkersProcess {
  readonly options: WorkersProcessOptions;
  readonly calls: string[];
  die(reason: string): void;
}

/** The log every fake and the supervisor write to, in order. */
function harness(plan: { failStarts?: number } = {}) {
  const events: string[] = [];
  const processes: FakeProcess[] = [];
  const delays: number[] = [];
  let failStarts = plan.failStarts ?? 0;
  /** Starts that have begun and not finished (a test finishes them). */
  const pendingStarts: Array<() => void> = [];
  let holdStarts = false;
  let config: ConfigData = { config: { version: 1 } as never, source: 'v1' };

  const startProcess = async (options: WorkersProcessOptions): Promise<WorkersProcess> => {
    if (holdStarts) await new Promise<void>((resolve) => pendingStarts.push(resolve));
    if (processes.length > 0 && failStarts > 0) {
      failStarts -= 1;
      events.push('start failed');
      throw new Error('the workers and the service emulator did not start: port in use');
    }
    const pid = 1000 + processes.length;
    let alive = true;
    const calls: string[] = [];
    const note = (call: string) => {
      calls.push(call);
      events.push(`${pid} ${call}`);
    };
    const fake: FakeProcess = {
      options,
      calls,
      pid,
      docgenUrl: `http://127.0.0.1:${options.emulator?.port ?? 4555}`,
      get alive() {
        return alive;
      },
      startWorkers: () => note('startWorkers'),
      stopWorkers: async () => note('stopWorkers'),
      useConfig: async () => note('useConfig'),
      stop: async () => {
        alive = false;
        note('stop');
      },
      die: (reason) => {
        alive = false;
        events.push(`${pid} died`);
        options.onExit?.(reason);
      },
    };
    processes.push(fake);
    events.push(`${pid} started (${options.initialConfig?.source ?? 'file'})`);
    return fake;
  };

  let beforeResume: () => Promise<void> = async () => {
    events.push('released');
  };
  const options: SupervisedWorkersOptions = {
    settings: {} as never,
    aws: {} as never,
    maxReceiveCount: 3,
    leaseMs: 60_000,
    logLevel: 'ERROR',
    onLine: (line) => events.push(`line: ${line}`),
    currentConfig: () => config,
    beforeResume: () => beforeResume(),
    startProcess,
    pause: async (ms) => {
      delays.push(ms);
    },
  };
  return {
    events,
    processes,
    delays,
    options,
    pendingStarts,
    holdStarts: () => {
      holdStarts = true;
    },
    setConfig: (source: string) => {
      config = { config: { version: 1 } as never, source };
    },
    onResume: (run: () => Promise<void>) => {
      beforeResume = run;
    },
  };
}

/** Lets every queued promise callback run (the supervisor's awaits on already-settled fakes). */
const settle = async (rounds = 20): Promise<void> => {
  for (let round = 0; round < rounds; round += 1) await Promise.resolve();
};

describe('the supervised workers’ process', () => {
  it('starts a dead process again with the running config on the same port, releases what it held, then polls', async () => {
    const h = harness();
    const workers = await startSupervisedWorkersProcess(h.options);
    workers.startWorkers();
    const first = h.processes[0] as FakeProcess;
    h.setConfig('v2');

    first.die("the workers' process ended (signal SIGKILL)");
    expect(workers.alive).toBe(false);
    await settle();

    const second = h.processes[1] as FakeProcess;
    expect(second.options.initialConfig?.source).toBe('v2');
    expect(second.docgenUrl).toBe(first.docgenUrl);
    expect(h.events.slice(h.events.indexOf('1000 died'))).toEqual([
      '1000 died',
      "line: error: the workers' process ended (signal SIGKILL); starting it again in 1 s",
      '1001 started (v2)',
      'released',
      '1001 startWorkers',
      "line: the workers' process runs again (pid 1001)",
    ]);
    expect(workers.alive).toBe(true);
    expect(workers.pid).toBe(1001);
    await workers.stop();
    expect(second.calls).toEqual(['startWorkers', 'stop']);
  });

  it('waits twice as long after each failed start, up to 30 s, and does not poll a process that was never polling', async () => {
    const h = harness({ failStarts: 6 });
    const workers = await startSupervisedWorkersProcess(h.options);
    (h.processes[0] as FakeProcess).die('ended');
    await settle(100);

    expect(h.delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
    expect(h.events.filter((event) => event.startsWith('line: error:'))).toContain(
      'line: error: the workers and the service emulator did not start: port in use; starting it again in 2 s',
    );
    expect(h.processes).toHaveLength(2);
    expect((h.processes[1] as FakeProcess).calls).toEqual([]);
    expect(workers.alive).toBe(true);
    await workers.stop();
  });

  it('hands a config over while a process runs, and leaves it to the next start while none does', async () => {
    const h = harness();
    h.holdStarts();
    const starting = startSupervisedWorkersProcess(h.options);
    await settle();
    h.pendingStarts.shift()?.();
    const workers = await starting;
    await workers.useConfig({} as never);
    expect((h.processes[0] as FakeProcess).calls).toEqual(['useConfig']);

    (h.processes[0] as FakeProcess).die('ended');
    await settle();
    await workers.useConfig({} as never);
    expect((h.processes[0] as FakeProcess).calls).toEqual(['useConfig']);
    h.pendingStarts.shift()?.();
    await settle();
    expect((h.processes[1] as FakeProcess).calls).toEqual([]);
    await workers.stop();
  });

  it('lets the restart of a process that died while being resumed carry on alone: one "runs again", for the live one', async () => {
    const h = harness();
    const workers = await startSupervisedWorkersProcess(h.options);
    workers.startWorkers();
    let resumes = 0;
    h.onResume(async () => {
      resumes += 1;
      h.events.push('released');
      // The first new process dies while its predecessor's jobs are being released.
      if (resumes === 1) (h.processes[1] as FakeProcess).die('ended again');
    });

    (h.processes[0] as FakeProcess).die('ended');
    await settle(60);

    expect(h.processes.map((process) => process.pid)).toEqual([1000, 1001, 1002]);
    expect((h.processes[1] as FakeProcess).calls).toEqual([]);
    expect((h.processes[2] as FakeProcess).calls).toEqual(['startWorkers']);
    expect(h.events.filter((event) => event.includes('runs again'))).toEqual([
      "line: the workers' process runs again (pid 1002)",
    ]);
    expect(workers.alive).toBe(true);
    await workers.stop();
  });

  it('stops a process whose start was in flight before stop() resolves, and starts no other', async () => {
    const h = harness();
    const workers = await startSupervisedWorkersProcess(h.options);
    h.holdStarts();
    (h.processes[0] as FakeProcess).die('ended');
    await settle();
    expect(h.pendingStarts).toHaveLength(1);

    const stopped = workers.stop();
    h.pendingStarts.shift()?.();
    await stopped;

    expect(h.processes).toHaveLength(2);
    expect((h.processes[1] as FakeProcess).calls).toEqual(['stop']);
    expect((h.processes[1] as FakeProcess).alive).toBe(false);
    expect(h.events.some((event) => event.includes('runs again'))).toBe(false);
  });
});
