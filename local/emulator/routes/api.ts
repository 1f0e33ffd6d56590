/**
 * The operations under `/v1.0`: the latency fault, the key, then the request faults (`failNext`, the 429
 * and 5xx dice), then the route by path.
 */
import { EmulatorHttpError, injectedError } from '../errors';
import { type Exchange, injectDelay } from '../exchange';
import type { EmulatorState } from '../state';
import { createDocumentRoute } from './documents';
import { apiPrefix, templatesRoute } from './templates';
import { workspaceRoute } from './workspace';

const serverErrors = [500, 502, 503, 504] as const;

/** Answers one API request. */
export async function apiRoute(state: EmulatorState, ex: Exchange): Promise<void> {
  await injectDelay(state, ex, state.faults.latencyMs);
  state.requireKey(ex.req);
  injectRequestFault(state, ex);
  const [collection, id, sub, ...rest] = ex.path
    .slice(apiPrefix.length + 1)
    .split('/')
    .map(decodeSegment);
  if (collection === 'workspace' && sub === undefined) return workspaceRoute(state, ex, id);
  if (collection === 'templates' && sub === undefined) return templatesRoute(state, ex, id);
  if (collection === 'templates' && id !== undefined && sub === 'documents' && rest.length === 0) {
    return createDocumentRoute(state, ex, id);
  }
  throw new EmulatorHttpError(404, 'NotFound', `No operation at ${ex.path}`);
}

/** Throws the injected failure that decides this request, if any. */
function injectRequestFault(state: EmulatorState, ex: Exchange): void {
  const faults = state.faults;
  const { dice } = state.setup;
  if (faults.failNext !== undefined && state.takeCountdown('failNext')) {
    ex.fault = 'failNext';
    throw injectedError(faults.failNext.status, faults.retryAfterSeconds);
  }
  if (dice.chance(faults.rate429)) {
    ex.fault = 'rate429';
    throw injectedError(429, faults.retryAfterSeconds);
  }
  if (dice.chance(faults.rate5xx)) {
    ex.fault = 'rate5xx';
    throw injectedError(dice.pick(serverErrors), faults.retryAfterSeconds);
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new EmulatorHttpError(400, 'BadRequest', `Malformed path segment ${segment}`);
  }
}
