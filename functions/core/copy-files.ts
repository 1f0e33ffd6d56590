/**
 * Copies a job's files from the service's download links into the document store, checkpointing each through
 * the job's JobCheckpoint (which writes a pending `created` before a failure is handled). A link is always tried
 * first: only the service refusing it makes the job ask for a new document, and each refusal teaches the worker
 * the links' lifetime (link-lifetime.ts).
 */
import { openJson } from '../commons/seal';
import {
  DocgenDownloadCutError,
  DocgenDownloadOriginRefusedError,
  DocgenError,
  DocgenLinkExpiredError,
} from '../docgen/errors';
import type { DocumentDownload } from '../ports/document-service';
import { discardEarly, type EarlyDownload } from './generate-document';
import { applyChanges, type JobDocument, type JobFile, type JobRecord, transitions } from './job';
import type { JobCheckpoint } from './job-checkpoint';
import { decideCopyRetry, describeFailure } from './retry-policy';
import { jobKeyPrefix, renderKey } from './storage-key';
import { logFields, serviceBudget, type Worker } from './worker-deps';

/**
 * The service refused a link: expired (401, 403, 404, 410), or any other 4xx but 408 and 429, which for a
 * link it made can only be the token: its interface names no status for an expired link.
 */
export const isLinkRefusal = (error: unknown): boolean =>
  error instanceof DocgenLinkExpiredError ||
  (error instanceof DocgenError &&
    error.operation === 'download' &&
    error.status !== undefined &&
    error.status >= 400 &&
    error.status < 500 &&
    error.status !== 408 &&
    error.status !== 429);

/**
 * Copies every file not stored yet, retrying a failed copy within the attempt as decideCopyRetry says (at
 * most MAX_COPY_RETRIES_PER_ATTEMPT failures). Resolves `done: false` when the service refused a link and a
 * new document is needed; throws what the job's retry decision must see. Any failure writes the checkpoint
 * first, so a retry copies from its links; `job` is then as written.
 */
export async function copyFiles(
  w: Worker,
  checkpoint: JobCheckpoint,
  links: Readonly<Record<string, string>>,
  checkpointed: boolean,
  early?: EarlyDownload,
): Promise<{ job: JobRecord; done: boolean }> {
  let failures = 0;
  let pending = early;
  try {
    for (;;) {
      const file = checkpoint.job.files.find((f) => f.storedAt === undefined);
      if (file === undefined) return { job: checkpoint.job, done: true };
      const prefetched = pending?.fileId === file.fileId ? pending : undefined;
      if (prefetched !== undefined) pending = undefined;
      const requestedAt = prefetched?.startedAt ?? w.now();
      try {
        await storeFile(w, checkpoint, file, links, prefetched);
      } catch (error) {
        const job = await checkpoint.flush();
        if (isLinkRefusal(error)) {
          await w.links.observe(w.log, 'refused', linkAgeMs(job, requestedAt));
          w.log.warn('the service refused a download link as expired; asking for a new document', {
            jobId: job.jobId,
            ...logFields(describeFailure(error)),
          });
          return { job, done: false };
        }
        if (checkpointed && error instanceof DocgenDownloadOriginRefusedError) {
          // Kept links on an origin no longer allowed (the service moved, or the config changed): a new
          // document gets links on today's origin. Fresh links on a refused origin still fail the job.
          w.log.warn(
            'the kept download links are on an origin no longer allowed; asking for a new document',
            {
              jobId: job.jobId,
            },
          );
          return { job, done: false };
        }
        failures += 1;
        const planned = await w.links.plannedMs(w.log);
        const next = decideCopyRetry({ error, failures, linkRemainingMs: planned - linkAgeMs(job, w.now()) });
        if (next.kind === 'settle') throw error;
        w.log.warn('copy failed; downloading again', {
          jobId: job.jobId,
          ...logFields(describeFailure(error)),
          pauseMs: next.pauseMs,
        });
        if (next.pauseMs > 0) await w.sleep(next.pauseMs);
      }
    }
  } finally {
    discardEarly(pending);
  }
}

/** How old the job's links were at `atMs` (since the create answer), in ms; 0 without a document. */
const linkAgeMs = (job: JobRecord, atMs: number): number => {
  const createdAt = Date.parse(job.document?.createdAt ?? '');
  return Number.isNaN(createdAt) ? 0 : Math.max(0, atMs - createdAt);
};

/** A `created` job's kept links, when the seal opens and every unstored file has one; tried at any age. */
export function keptLinks(job: JobRecord, secret: string): Record<string, string> | undefined {
  const document = job.document;
  if (job.status !== 'created' || document?.sealedLinks === undefined) return undefined;
  const links = openJson(document.sealedLinks, secret, `links:${job.jobId}`);
  if (links === null || typeof links !== 'object' || Array.isArray(links)) return undefined;
  const result: Record<string, string> = {};
  for (const [id, url] of Object.entries(links)) if (typeof url === 'string') result[id] = url;
  return job.files.every((file) => file.storedAt !== undefined || Object.hasOwn(result, file.fileId))
    ? result
    : undefined;
}

/** Where one file of a job's document is stored: `storage.keyPattern` rendered for it. */
export function fileKey(w: Worker, job: JobRecord, document: JobDocument, file: JobFile): string {
  return renderKey(w.config.config.storage.keyPattern, {
    integration: job.integration,
    rule: job.rule,
    jobId: job.jobId,
    deliveryId: job.deliveryId,
    documentId: document.id,
    templateId: document.templateId,
    ...(document.templateFileId === undefined ? {} : { templateFileId: document.templateFileId }),
    fileId: file.fileId,
    filename: file.filename,
    at: new Date(job.receivedAt),
  });
}

/**
 * The key prefix every file of the job lands under whatever its document (storage-key.ts, jobKeyPrefix), if
 * the pattern gives one: what an earlier attempt left there unrecorded is found by listing it (removeStrays).
 */
export function jobFilesPrefix(w: Worker, job: JobRecord): string | undefined {
  return jobKeyPrefix(w.config.config.storage.keyPattern, {
    integration: job.integration,
    rule: job.rule,
    jobId: job.jobId,
    deliveryId: job.deliveryId,
    at: new Date(job.receivedAt),
  });
}

/**
 * Drops a document whose links died, so a new one is asked for. Its files' keys go first, checkpointed or
 * not, since a new document may land under other keys and leave them to no job. A failed removal is logged
 * and does not stop the job (docs/decisions.md, "Dropping a document").
 */
export async function dropDocument(w: Worker, job: JobRecord): Promise<JobRecord> {
  const document = job.document;
  if (document !== undefined && job.files.length > 0) {
    const keys = job.files.map((file) => file.key ?? fileKey(w, job, document, file));
    try {
      await w.store.remove(keys);
    } catch (error) {
      w.log.warn('could not remove the files of a dropped document', {
        jobId: job.jobId,
        documentId: document.id,
        keys,
        ...logFields(describeFailure(error)),
      });
    }
  }
  return w.jobs.updateJob(job, transitions.linksExpired(job));
}

/** Opens a file's download: the early one when it was begun, else now. Tells the estimate a served age. */
async function openDownload(
  w: Worker,
  job: JobRecord,
  url: string,
  early: EarlyDownload | undefined,
): Promise<DocumentDownload> {
  const started = linkAgeMs(job, early?.startedAt ?? w.now());
  let download: DocumentDownload;
  if (early === undefined) {
    download = await w.docgen.download(url, serviceBudget(job));
    // Until the store listens, a break in the body is seen through `errored` below, not as an unheard error.
    download.body.on('error', () => undefined);
  } else {
    const result = await early.result;
    if (!('body' in result)) throw result.failed;
    download = result;
  }
  // Not awaited: an open body must not wait on the shared estimate's write; observe never throws.
  void w.links.observe(w.log, 'served', started);
  // An early body that broke off while it waited is that download's failure; checked synchronously just
  // before the store takes the body.
  if (download.body.errored !== null || download.body.destroyed) {
    throw (
      download.body.errored ?? new DocgenDownloadCutError('download: the body ended before the copy began')
    );
  }
  return download;
}

/** Streams one file from its download link into the document store and checkpoints it. */
async function storeFile(
  w: Worker,
  checkpoint: JobCheckpoint,
  file: JobFile,
  links: Readonly<Record<string, string>>,
  early: EarlyDownload | undefined,
): Promise<JobRecord> {
  const job = checkpoint.job;
  const document = job.document as JobDocument;
  const key = fileKey(w, job, document, file);
  // Under the job's own prefix a file an attempt leaves unrecorded is found by listing it; elsewhere its key
  // is recorded before it lands.
  if (jobFilesPrefix(w, job) === undefined) await checkpoint.announce(w.store.bucket, key);
  const download = await openDownload(w, job, links[file.fileId] as string, early);
  const result = await w.store.put({
    key,
    body: download.body,
    ...(download.contentLength === undefined ? {} : { contentLength: download.contentLength }),
    // The service's size guards against a cut only where the transport marks no end (no Content-Length, not
    // chunked); elsewhere the transport decides, so a size in a unit other than bytes cannot fail every copy.
    ...(download.framed || file.size === undefined ? {} : { expectedSize: file.size }),
    contentType: file.mimeType || download.contentType || 'application/octet-stream',
    metadata: {
      'docrelay-job': job.jobId,
      'docrelay-integration': job.integration,
      'docrelay-rule': job.rule,
      'docrelay-delivery': encodeURIComponent(job.deliveryId),
      'docrelay-document': document.id,
      'docrelay-template': document.templateId,
      'docrelay-template-file': document.templateFileId ?? '',
      'docrelay-file': file.fileId,
      'docrelay-filename': encodeURIComponent(file.filename),
    },
  });
  if (download.framed && file.size !== undefined && file.size !== result.size) {
    w.log.warn('the service announced a size other than the bytes downloaded', {
      jobId: job.jobId,
      fileId: file.fileId,
      announced: file.size,
      received: result.size,
    });
  }
  const stored: JobFile = {
    ...file,
    bucket: result.bucket,
    key: result.key,
    sha256: result.sha256,
    storedSize: result.size,
    storedAt: new Date(w.now()).toISOString(),
  };
  w.log.info('file stored', { jobId: job.jobId, key, size: result.size });
  const changes = transitions.fileStored(job, stored);
  const after = applyChanges(job, changes, new Date(w.now()).toISOString());
  // The last file's checkpoint and the job's `stored` go in one write instead of two (with `created`, when
  // still pending, for a one-file document).
  if (after.files.every((f) => f.storedAt !== undefined)) {
    return checkpoint.write({ ...changes, ...transitions.stored(after) });
  }
  return checkpoint.write(changes);
}
