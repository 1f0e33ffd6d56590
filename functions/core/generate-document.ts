/**
 * Generates a job's document and makes its `created` checkpoint (links sealed), left to the copy to write
 * (job-checkpoint.ts). The first file's download starts as the service answers, since the service checks a
 * link when its download starts: a short-lived link is caught alive.
 */
import { sealJson } from '../commons/seal';
import { findRule } from '../config/compile';
import type { DocumentFile } from '../docgen/types';
import { mapRule } from '../mapping/mapper';
import type { DocumentDownload } from '../ports/document-service';
import { RuleRemovedError } from './errors';
import {
  type DeliveryRecord,
  type JobChanges,
  type JobDocument,
  type JobFile,
  type JobRecord,
  transitions,
} from './job';
import { openPayload, payloadMappingInput } from './payload';
import { serviceBudget, type Worker } from './worker-deps';

/** A download begun before its file's turn; it never rejects (its failure is its value). */
export interface EarlyDownload {
  readonly fileId: string;
  /** When its request went out (epoch ms). */
  readonly startedAt: number;
  readonly result: Promise<DocumentDownload | { readonly failed: unknown }>;
}

/** Starts a file's download now; its outcome is kept for the copy, or discarded (discardEarly). */
export function startEarly(w: Worker, job: JobRecord, fileId: string, url: string): EarlyDownload {
  return {
    fileId,
    startedAt: w.now(),
    result: w.docgen.download(url, serviceBudget(job)).then(
      (download) => {
        // Its body may break off before the copy takes it: the copy then finds it errored (`errored`),
        // instead of an unheard error ending the process.
        download.body.on('error', () => undefined);
        return download;
      },
      (failed: unknown) => ({ failed }),
    ),
  };
}

/** Closes an early download nobody will copy (its body would hold a connection). */
export function discardEarly(early: EarlyDownload | undefined): void {
  void early?.result.then((result) => {
    if ('body' in result) result.body.destroy();
  });
}

/** A document generated for a job: its `created` changes (not written yet), its links, its first download. */
export interface GeneratedDocument {
  readonly created: JobChanges;
  readonly links: Record<string, string>;
  readonly early?: EarlyDownload;
}

/** Maps the delivery's payload and has the service generate the document; `job` is not written. */
export async function generateDocument(
  w: Worker,
  job: JobRecord,
  delivery: DeliveryRecord,
  sealingSecret: string,
): Promise<GeneratedDocument> {
  const rule = findRule(w.config, job.integration, job.rule);
  if (rule === undefined) throw new RuleRemovedError(job.integration, job.rule);
  const payload = openPayload(delivery.sealedPayload, sealingSecret, job.integration, job.deliveryId);
  const template = await w.templates.getTemplate(job.templateId);
  const mapped = await mapRule(rule, payloadMappingInput(payload, job.receivedAt), template);
  const created = await w.docgen.createDocument({
    templateId: mapped.templateId,
    data: mapped.data,
    template,
    ...(mapped.templateFileId === undefined ? {} : { templateFileId: mapped.templateFileId }),
    ...serviceBudget(job),
  });
  const createdAt = w.now();
  const first = created.files[0];
  const early = first === undefined ? undefined : startEarly(w, job, first.id, first.downloadUrl);
  try {
    const links = Object.fromEntries(created.files.map((file) => [file.id, file.downloadUrl]));
    const document: JobDocument = {
      id: created.id,
      name: created.name,
      templateId: mapped.templateId,
      ...(mapped.templateFileId === undefined ? {} : { templateFileId: mapped.templateFileId }),
      createdAt: new Date(createdAt).toISOString(),
      linksExpireAt: new Date(createdAt + (await w.links.plannedMs(w.log))).toISOString(),
      sealedLinks: sealJson(links, sealingSecret, `links:${job.jobId}`),
    };
    const changes = transitions.created(job, document, created.files.map(toJobFile));
    w.log.info('document created', {
      jobId: job.jobId,
      documentId: created.id,
      files: created.files.length,
    });
    return { created: changes, links, ...(early === undefined ? {} : { early }) };
  } catch (error) {
    discardEarly(early);
    throw error;
  }
}

const toJobFile = (file: DocumentFile): JobFile => ({
  fileId: file.id,
  filename: file.filename,
  mimeType: file.mimeType,
  ...(file.size === undefined ? {} : { size: file.size }),
});
