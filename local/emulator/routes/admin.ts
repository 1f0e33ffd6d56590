/**
 * The admin API under `/_emulator/` (same `x-api-key`, never faulted nor recorded): faults, readings, stats,
 * the outage switch.
 */
import { EmulatorHttpError, methodNotAllowed } from '../errors';
import { answerJson, type Exchange } from '../exchange';
import { readBody } from '../http-io';
import type { EmulatorState } from '../state';

/** Path prefix of the admin routes. */
export const adminPrefix = '/_emulator/';
const adminBodyLimit = 64 * 1024;

/** Answers one admin request. */
export async function adminRoute(state: EmulatorState, ex: Exchange): Promise<void> {
  state.requireKey(ex.req);
  const method = ex.req.method ?? 'GET';
  const action = ex.path.slice(adminPrefix.length);
  const expect = (allowed: string): void => {
    if (method !== allowed) throw methodNotAllowed(allowed);
  };
  switch (action) {
    case 'faults':
      if (method === 'PUT') await applyPatch(ex, (patch) => state.setFaults(patch));
      else expect('GET');
      return answerJson(state, ex, 200, state.faults);
    case 'readings':
      if (method === 'PUT') await applyPatch(ex, (patch) => state.setReadings(patch));
      else expect('GET');
      return answerJson(state, ex, 200, state.readings);
    case 'stats':
      expect('GET');
      return answerJson(state, ex, 200, state.setup.stats.snapshot());
    case 'reset-stats':
      expect('POST');
      state.setup.stats.reset();
      return answerJson(state, ex, 200, { reset: true });
    case 'pause':
    case 'resume':
      expect('POST');
      state.paused = action === 'pause';
      return answerJson(state, ex, 200, { paused: state.paused });
    default:
      throw new EmulatorHttpError(404, 'NotFound', `No admin route at ${ex.path}`);
  }
}

/** Reads a JSON patch and applies it; an invalid one is a 400 that changes nothing. */
async function applyPatch(ex: Exchange, apply: (patch: unknown) => void): Promise<void> {
  const raw = await readBody(ex.req, adminBodyLimit);
  let patch: unknown;
  try {
    patch = JSON.parse(raw.toString('utf8') || '{}');
  } catch {
    throw new EmulatorHttpError(400, 'BadRequest', 'The request body is not valid JSON');
  }
  try {
    apply(patch);
  } catch (error) {
    throw new EmulatorHttpError(400, 'BadRequest', (error as Error).message);
  }
}
