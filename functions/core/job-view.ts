/** The job as `GET /v1/jobs/{jobId}` and `docrelay jobs show` present it (product-spec.md). */
import type { JobRecord } from './job';

/** A stored file in a job view, with a presigned link to read it. */
export interface JobFileView {
  bucket: string;
  key: string;
  size: number;
  sha256: string;
  mimeType: string;
  filename: string;
  downloadUrl?: string;
}

/** The public view of a job. */
export interface JobView {
  jobId: string;
  integration: string;
  rule: string;
  deliveryId: string;
  status: JobRecord['status'];
  attempts: number;
  receivedAt: string;
  updatedAt: string;
  document?: { id: string; name: string; templateId: string; templateFileId?: string };
  files: JobFileView[];
  error?: { code: string; message: string };
  lastError?: { code: string; message: string };
  /** The errors of the attempts that did not finish the job, oldest first (the last ten). */
  attemptErrors?: Array<{ attempt: number; at: string; code: string; message: string }>;
}

/** Builds the public view; `presign` gives each stored file its download link. */
export async function toJobView(
  job: JobRecord,
  presign?: (bucket: string, key: string) => Promise<string>,
): Promise<JobView> {
  const stored = job.files.filter((file) => file.key !== undefined && file.bucket !== undefined);
  const files = await Promise.all(
    stored.map(async (file): Promise<JobFileView> => {
      const bucket = file.bucket as string;
      const key = file.key as string;
      return {
        bucket,
        key,
        size: file.storedSize ?? file.size ?? 0,
        sha256: file.sha256 ?? '',
        mimeType: file.mimeType,
        filename: file.filename,
        ...(presign === undefined ? {} : { downloadUrl: await presign(bucket, key) }),
      };
    }),
  );
  return {
    jobId: job.jobId,
    integration: job.integration,
    rule: job.rule,
    deliveryId: job.deliveryId,
    status: job.status,
    attempts: job.attempts,
    receivedAt: job.receivedAt,
    updatedAt: job.updatedAt,
    ...(job.document === undefined
      ? {}
      : {
          document: {
            id: job.document.id,
            name: job.document.name,
            templateId: job.document.templateId,
            ...(job.document.templateFileId === undefined
              ? {}
              : { templateFileId: job.document.templateFileId }),
          },
        }),
    files,
    ...(job.error === undefined ? {} : { error: job.error }),
    ...(job.lastError === undefined || job.status === 'stored' ? {} : { lastError: job.lastError }),
    ...(job.attemptErrors === undefined || job.attemptErrors.length === 0
      ? {}
      : { attemptErrors: job.attemptErrors.map((entry) => ({ ...entry })) }),
  };
}
