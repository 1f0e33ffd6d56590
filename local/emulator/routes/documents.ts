/**
 * `POST /v1.0/templates/{id}/documents[?@api.templateFileId=]`: checks the request, renders the chosen file,
 * keeps it behind a temporary link and answers the Document in the current readings. The
 * `failAfterCreateNext` fault answers 503 after the document is made.
 */
import { createHash, randomUUID } from 'node:crypto';
import { extname } from 'node:path';
import { type CheckedData, checkDocumentData, systemEntries } from '../document-data';
import { downloadUrl, type StoredContent } from '../download-links';
import { EmulatorHttpError, injectedError, methodNotAllowed } from '../errors';
import { answerJson, type Exchange, injectDelay } from '../exchange';
import { isJsonContentType, readBody } from '../http-io';
import { renderTemplateFile } from '../renderer';
import type { EmulatorState } from '../state';
import { digestPadded } from '../synthetic-bytes';
import type { StoredTemplate, StoredTemplateFile } from '../template-store';
import { findTemplate } from './templates';

/** Checks and answers one create-document request. */
export async function createDocumentRoute(
  state: EmulatorState,
  ex: Exchange,
  templateId: string,
): Promise<void> {
  if (ex.req.method !== 'POST') throw methodNotAllowed('POST');
  const raw = await readBody(ex.req, state.setup.bodyLimitBytes, state.readings.payloadTooLargeMessage);
  if (!isJsonContentType(ex.req.headers['content-type'])) {
    throw new EmulatorHttpError(
      415,
      'UnsupportedMediaType',
      'Content-Type must be application/json; charset=utf-8',
    );
  }
  const template = findTemplate(state, templateId);
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new EmulatorHttpError(400, 'BadRequest', 'The request body is not valid JSON');
  }
  const file = chooseFile(template, ex.url.searchParams.get('@api.templateFileId'));
  const checked = checkDocumentData(template, file, body, state.setup.enforceRequired);
  const { stats } = state.setup;
  stats.generationStarted();
  try {
    await injectDelay(state, ex, state.faults.generationLatencyMs);
    const document = await generate(state, template, file, checked);
    if (state.takeCountdown('failAfterCreateNext')) {
      ex.fault = 'failAfterCreate';
      throw injectedError(503, state.faults.retryAfterSeconds);
    }
    answerJson(state, ex, state.readings.createStatus, document);
  } finally {
    stats.generationEnded();
  }
}

function chooseFile(template: StoredTemplate, requested: string | null): StoredTemplateFile {
  const files = template.files.map((f) => `${f.resource.id} (${f.resource.filename})`).join(', ');
  if (requested === null || requested === '') {
    const only = template.files.length === 1 ? template.files[0] : undefined;
    if (only !== undefined) return only;
    throw new EmulatorHttpError(
      400,
      'BadRequest',
      `Template ${template.id} has ${template.files.length} files: the query parameter @api.templateFileId is required, one of ${files}`,
    );
  }
  const file = template.files.find((f) => f.resource.id === requested);
  if (file === undefined) {
    throw new EmulatorHttpError(
      400,
      'BadRequest',
      `Template ${template.id} has no file ${requested}; its files are ${files}`,
    );
  }
  return file;
}

/** Renders the file, stores it behind a new link, records the document and returns its resource. */
async function generate(
  state: EmulatorState,
  template: StoredTemplate,
  file: StoredTemplateFile,
  { clientData, renderValues }: CheckedData,
): Promise<Record<string, unknown>> {
  const { seed, clock, workspace, links, stats } = state.setup;
  const number = state.nextNumber();
  const system = systemEntries({
    automaticNumber: number,
    now: new Date(clock()),
    template,
    workspace,
    clientData,
  });
  const rendered = renderTemplateFile(file, renderValues);
  const fileId = randomUUID();
  const { filename: templateName, mimeType } = file.resource;
  const extension = extname(templateName);
  const filename = `${templateName.slice(0, templateName.length - extension.length)}-${number}${extension}`;
  let content: StoredContent;
  let digest: { sha256: string; size: number };
  if (file.padToBytes !== undefined) {
    const fileSeed = (seed ^ Math.imul(number, 0x9e3779b1)) >>> 0;
    content = { kind: 'padded', prefix: rendered, seed: fileSeed };
    digest = await digestPadded(rendered, file.padToBytes, fileSeed);
  } else {
    content = { kind: 'buffer', data: rendered };
    digest = { sha256: createHash('sha256').update(rendered).digest('hex'), size: rendered.length };
  }
  const stored = links.add(
    { fileId, filename, mimeType, size: digest.size, sha256: digest.sha256, content },
    state.faults.linkTtlMs,
  );
  const documentId = randomUUID();
  stats.documentCreated({
    documentId,
    templateId: template.id,
    templateFileId: file.resource.id,
    files: [{ fileId, sha256: digest.sha256, size: digest.size }],
    createdAt: stored.expiresAt - state.faults.linkTtlMs,
    linksExpireAt: stored.expiresAt,
    ...(typeof clientData['Title'] === 'string' ? { title: clientData['Title'] } : {}),
  });
  return {
    id: documentId,
    name: String(system['Title']),
    data: { ...clientData, ...system },
    templateReference: { id: template.id, name: template.name },
    files: [
      {
        id: fileId,
        mimeType,
        filename,
        size: digest.size,
        templateFileReference: { id: file.resource.id, name: templateName, templateId: template.id },
        isTemporary: true,
        [state.readings.linkField]: downloadUrl(state.baseUrl, fileId, stored.token),
      },
    ],
  };
}
