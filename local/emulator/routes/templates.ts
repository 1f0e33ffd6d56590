/** `GET /v1.0/templates[/{id}]`: active templates newest first in pages, or one template with its properties. */
import type { TemplatePage } from '../../../functions/docgen/types';
import { EmulatorHttpError, methodNotAllowed } from '../errors';
import { answerJson, type Exchange } from '../exchange';
import type { EmulatorState } from '../state';
import {
  decodeSkipToken,
  encodeSkipToken,
  type StoredTemplate,
  templateListItem,
  templateResource,
} from '../template-store';

/** Path prefix of the operations. */
export const apiPrefix = '/v1.0';

/** Answers the template list (by `$skiptoken` pages) or one template. */
export function templatesRoute(state: EmulatorState, ex: Exchange, id: string | undefined): void {
  if (ex.req.method !== 'GET') throw methodNotAllowed('GET');
  if (id !== undefined) {
    answerJson(state, ex, 200, templateResource(findTemplate(state, id)));
    return;
  }
  const { store, pageSize } = state.setup;
  const token = ex.url.searchParams.get('$skiptoken');
  const offset = token === null ? 0 : decodeSkipToken(token);
  if (offset === undefined) throw new EmulatorHttpError(400, 'BadRequest', 'Invalid $skiptoken');
  const { items, more } = store.page(offset, pageSize);
  const page: TemplatePage = { value: items.map(templateListItem) };
  if (more) {
    page['@odata.nextLink'] =
      `${state.baseUrl}${apiPrefix}/templates?$skiptoken=${encodeSkipToken(offset + pageSize)}`;
  }
  answerJson(state, ex, 200, page);
}

/** An active template by id, or 404. */
export function findTemplate(state: EmulatorState, id: string): StoredTemplate {
  const template = state.setup.store.get(id);
  if (template === undefined) throw new EmulatorHttpError(404, 'NotFound', `Template ${id} not found`);
  return template;
}
