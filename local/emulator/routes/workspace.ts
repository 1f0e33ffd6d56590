/** `GET /v1.0/workspace[/{id}]`: the one workspace of the API key. */
import { EmulatorHttpError, methodNotAllowed } from '../errors';
import { answerJson, type Exchange } from '../exchange';
import type { EmulatorState } from '../state';

/** Answers the workspace list, or the workspace by id (404 for any other id). */
export function workspaceRoute(state: EmulatorState, ex: Exchange, id: string | undefined): void {
  if (ex.req.method !== 'GET') throw methodNotAllowed('GET');
  const { workspace } = state.setup;
  if (id === undefined) {
    answerJson(state, ex, 200, { value: [workspace] });
    return;
  }
  if (id.toLowerCase() !== workspace.id.toLowerCase()) {
    throw new EmulatorHttpError(404, 'NotFound', `Workspace ${id} not found`);
  }
  answerJson(state, ex, 200, workspace);
}
