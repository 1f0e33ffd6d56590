/**
 * Evaluates expressions in a small pool of worker threads with a capped heap and a kill timer, so a runaway
 * one fails its own job (`MAPPING_TOO_LARGE`, `MAPPING_TIMEOUT`) and its thread is replaced. A thread runs
 * this module (bundled: `MAPPING_ISOLATE_FILE`), marked by `workerData`; see docs/decisions.md, "Mapping".
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { isMainThread, parentPort, type ResourceLimits, Worker, workerData } from 'node:worker_threads';
import { type CompiledExpression, compileExpression, type ExpressionLimits } from '../config/expressions';
import { MAPPING_ISOLATE_FILE } from '../config/lambda-env';
import type { MappingProblem } from './errors';
import { type EvaluationOutcome, evaluateAll, type PreparedInput, toJsonValue } from './evaluate';

/** The `workerData` key that makes a thread loading this module (or a bundle holding it) answer requests. */
export const ISOLATE_MARKER = 'docrelayMappingIsolate';

/** Options of an isolate pool; every default suits the worker Lambda. */
export interface IsolateOptions {
  /** Threads evaluating side by side. @default 2 */
  readonly size?: number;
  /** Old-generation heap of each thread, in MB. @default 256 */
  readonly maxOldGenerationSizeMb?: number;
  /** Added to the expressions' own time budgets to give the kill deadline of a request. @default 1000 */
  readonly graceMs?: number;
  /** Schedules the kill timer (tests pass a fake). @default setTimeout */
  readonly setTimer?: (callback: () => void, ms: number) => unknown;
  /** Cancels the kill timer. @default clearTimeout */
  readonly clearTimer?: (timer: unknown) => void;
}

/** A pool of evaluation threads. */
export interface MappingIsolate {
  /** Evaluates expressions in order (stopping after a fatal problem), as `evaluateAll` does in process. */
  evaluate(expressions: readonly CompiledExpression[], input: PreparedInput): Promise<EvaluationOutcome[]>;
  /** Terminates every thread; later calls start new ones. */
  close(): Promise<void>;
}

interface Request {
  readonly id: number;
  readonly expressions: ReadonlyArray<{ source: string; path: string; limits: ExpressionLimits }>;
  readonly body: unknown;
  readonly bindings: Readonly<Record<string, unknown>>;
}

type Reply = { readonly id: number; readonly outcomes: EvaluationOutcome[] } | { readonly ready: true };

interface Slot {
  readonly worker: Worker;
  ready: Promise<void>;
  busy: boolean;
}

/** Creates a pool; threads start on first use and do not keep the process alive. */
export function createMappingIsolate(options: IsolateOptions = {}): MappingIsolate {
  const size = Math.max(1, options.size ?? 2);
  const resourceLimits: ResourceLimits = { maxOldGenerationSizeMb: options.maxOldGenerationSizeMb ?? 256 };
  const graceMs = options.graceMs ?? 1000;
  const setTimer = options.setTimer ?? ((callback, ms) => setTimeout(callback, ms).unref());
  const clearTimer = options.clearTimer ?? ((timer) => clearTimeout(timer as NodeJS.Timeout));
  const slots = new Set<Slot>();
  const waiting: Array<(slot: Slot) => void> = [];
  let nextId = 1;

  const spawn = (): Slot => {
    const worker = startThread(resourceLimits);
    worker.unref();
    const slot: Slot = { worker, busy: true, ready: Promise.resolve() };
    slot.ready = new Promise<void>((resolve, reject) => {
      const onReady = (reply: Reply) => {
        if ('ready' in reply) {
          worker.off('message', onReady);
          worker.off('exit', onEarlyExit);
          resolve();
        }
      };
      // Not a MappingError: a thread that cannot start says nothing about the payload (the job retries).
      const onEarlyExit = (code: number) =>
        reject(new Error(`the mapping isolate exited on start (${code})`));
      worker.on('message', onReady);
      worker.once('exit', onEarlyExit);
      worker.once('error', () => undefined); // reported through 'exit'
    });
    slot.ready.catch(() => slots.delete(slot));
    slots.add(slot);
    return slot;
  };

  const acquire = (): Promise<Slot> => {
    for (const slot of slots) {
      if (!slot.busy) {
        slot.busy = true;
        return Promise.resolve(slot);
      }
    }
    if (slots.size < size) return Promise.resolve(spawn());
    return new Promise((resolve) => waiting.push(resolve));
  };

  const release = (slot: Slot, alive: boolean): void => {
    if (!alive) {
      slots.delete(slot);
      void slot.worker.terminate();
      const next = waiting.shift();
      if (next !== undefined) next(spawn());
      return;
    }
    const next = waiting.shift();
    if (next !== undefined) next(slot);
    else slot.busy = false;
  };

  const run = async (slot: Slot, request: Request, deadlineMs: number): Promise<EvaluationOutcome[]> => {
    await slot.ready;
    return new Promise((resolve) => {
      const finish = (outcomes: EvaluationOutcome[], alive: boolean) => {
        clearTimer(timer);
        slot.worker.off('message', onMessage);
        slot.worker.off('exit', onExit);
        release(slot, alive);
        resolve(outcomes);
      };
      const fatal = (problem: MappingProblem) => [{ ok: false as const, problem }];
      const onMessage = (reply: Reply) => {
        if ('id' in reply && reply.id === request.id) finish(reply.outcomes, true);
      };
      const onExit = () =>
        finish(
          fatal({
            code: 'MAPPING_TOO_LARGE',
            message: `${sourceOf(request)}: the evaluation ran out of its ${resourceLimits.maxOldGenerationSizeMb} MB of memory`,
          }),
          false,
        );
      const timer = setTimer(
        () =>
          finish(
            fatal({
              code: 'MAPPING_TIMEOUT',
              message: `${sourceOf(request)}: the evaluation ran past its hard limit of ${deadlineMs} ms`,
            }),
            false,
          ),
        deadlineMs,
      );
      slot.worker.on('message', onMessage);
      slot.worker.once('exit', onExit);
      slot.worker.postMessage(request);
    });
  };

  return {
    async evaluate(expressions, input) {
      if (expressions.length === 0) return [];
      const request: Request = {
        id: nextId++,
        expressions: expressions.map(({ source, path, limits }) => ({ source, path, limits })),
        body: input.body,
        bindings: input.bindings,
      };
      const deadlineMs = graceMs + expressions.reduce((sum, e) => sum + e.limits.timeoutMs, 0);
      const slot = await acquire();
      try {
        // Copied again on this side: plain objects of this realm, and no own `__proto__` turned into a prototype.
        return (await run(slot, request, deadlineMs)).map((outcome) =>
          outcome.ok ? { ok: true, value: toJsonValue(outcome.value, 0) } : outcome,
        );
      } catch (error) {
        release(slot, false);
        throw error;
      }
    },
    async close() {
      const all = [...slots];
      slots.clear();
      await Promise.all(all.map((slot) => slot.worker.terminate()));
    },
  };
}

// Every expression of a request ran or was about to: name the ones that may have caused it.
const sourceOf = (request: Request): string => request.expressions.map((e) => e.source).join(' | ');

/**
 * The script a thread runs when this module is bundled (`moduleFile` is the bundle): the isolate's own bundle
 * beside it when there is one, else the bundle itself. Undefined from TypeScript sources.
 */
export function bundledThreadScript(
  moduleFile: string,
  exists: (path: string) => boolean = existsSync,
): string | undefined {
  if (moduleFile.endsWith('.ts')) return undefined;
  const beside = join(dirname(moduleFile), MAPPING_ISOLATE_FILE);
  return exists(beside) ? beside : moduleFile;
}

// Looked up on the first thread's start: a function that never maps never touches the file system for it.
let bundled: { readonly script: string | undefined } | undefined;

function startThread(resourceLimits: ResourceLimits): Worker {
  const data = { [ISOLATE_MARKER]: true };
  bundled ??= { script: bundledThreadScript(__filename) };
  if (bundled.script !== undefined) return new Worker(bundled.script, { workerData: data, resourceLimits });
  // Resolved here, not in the thread: an eval'd thread resolves from the working directory.
  const tsx = createRequire(__filename).resolve('tsx/cjs');
  const source = `require(${JSON.stringify(tsx)}); require(${JSON.stringify(__filename)});`;
  return new Worker(source, { eval: true, workerData: data, resourceLimits });
}

/** The thread's side: compile once per expression, evaluate each request in process, answer with outcomes. */
function serve(): void {
  const port = parentPort;
  if (port === null) return;
  const compiled = new Map<string, CompiledExpression>();
  const compile = (e: Request['expressions'][number]): CompiledExpression => {
    const key = `${JSON.stringify(e.limits)}\u0000${e.source}`;
    let expression = compiled.get(key);
    if (expression === undefined) {
      expression = compileExpression(e.source, e.path, e.limits);
      if (compiled.size > 1000) compiled.clear();
      compiled.set(key, expression);
    }
    return expression;
  };
  port.on('message', async (request: Request) => {
    const outcomes = await evaluateAll(request.expressions.map(compile), {
      body: request.body,
      bindings: request.bindings,
    });
    port.postMessage({ id: request.id, outcomes } satisfies Reply);
  });
  port.postMessage({ ready: true } satisfies Reply);
}

if (!isMainThread && (workerData as Record<string, unknown> | null)?.[ISOLATE_MARKER] === true) serve();

let shared: MappingIsolate | undefined;

/** The process's pool, created on first use (the worker Lambda and `docrelay map` share one per process). */
export function sharedMappingIsolate(): MappingIsolate {
  shared ??= createMappingIsolate();
  return shared;
}
