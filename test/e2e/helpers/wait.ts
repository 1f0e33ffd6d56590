/** Bounded polling for the e2e tests: every wait gives up with a message saying what it waited for. */
import { setTimeout as sleep } from 'node:timers/promises';

/** How long and how often a wait polls. */
export interface WaitOptions {
  /** @default 30_000 */
  readonly timeoutMs?: number;
  /** @default 150 */
  readonly intervalMs?: number;
}

/**
 * Polls `probe` until it returns something other than undefined, and returns that. On timeout throws an error
 * naming `what` and the last thing `describe` said about the state (or the probe's last error).
 */
export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  options: WaitOptions & {
    describe?: () => Promise<string> | string;
    /** An error of the probe that ends the wait at once (else errors are retried until the timeout). */
    stopOn?: (error: unknown) => boolean;
  } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const intervalMs = options.intervalMs ?? 150;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
      lastError = undefined;
    } catch (error) {
      if (options.stopOn?.(error) === true) throw error;
      lastError = error;
    }
    if (Date.now() >= deadline) break;
    await sleep(intervalMs);
  }
  const state = options.describe === undefined ? '' : `; last state: ${await options.describe()}`;
  const cause = lastError === undefined ? '' : `; last error: ${String(lastError)}`;
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${state}${cause}`);
}
