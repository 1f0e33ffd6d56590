/** One request while the emulator answers it, and the one way answers are written and recorded. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { writeJson } from './http-io';
import type { EmulatorState } from './state';
import type { RequestRecord } from './stats';

/** State of one request while it is answered, for its stats record. */
export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  /** The path without a trailing slash. */
  readonly path: string;
  /** API and download requests are recorded; admin and explorer requests are not. */
  readonly recorded: boolean;
  /** Latency injected into this request. */
  delayMs: number;
  /** The injected fault that decided the answer. */
  fault?: RequestRecord['fault'];
}

/** Records the answer's status in the statistics (when the request is one that is recorded). */
export function recordAnswer(state: EmulatorState, ex: Exchange, status: number): void {
  if (!ex.recorded) return;
  state.setup.stats.request({
    method: ex.req.method ?? 'GET',
    path: ex.path,
    status,
    hadApiKey: ex.req.headers['x-api-key'] !== undefined,
    delayMs: ex.delayMs,
    at: state.setup.clock(),
    ...(ex.fault === undefined ? {} : { fault: ex.fault }),
  });
}

/** Answers with JSON and records it. */
export function answerJson(
  state: EmulatorState,
  ex: Exchange,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  recordAnswer(state, ex, status);
  writeJson(ex.res, status, body, headers);
}

/** Adds an injected latency to the exchange and waits it out. */
export async function injectDelay(state: EmulatorState, ex: Exchange, ms: number): Promise<void> {
  if (ms <= 0) return;
  ex.delayMs += ms;
  await state.delay(ms);
}
