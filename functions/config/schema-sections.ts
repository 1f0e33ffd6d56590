/** The `service`, `storage`, `ingest` and `jobs` sections of the configuration schema. */
import { z } from 'zod';
import { httpsUrl, origin, secretName } from './schema-fields';

/** Placeholders `storage.keyPattern` may use. */
export const KEY_PATTERN_PLACEHOLDERS = [
  'integration',
  'rule',
  'yyyy',
  'MM',
  'dd',
  'HH',
  'mm',
  'jobId',
  'deliveryId',
  'documentId',
  'templateId',
  'templateFileId',
  'fileId',
  'filename',
] as const;

/** The default `storage.keyPattern`. */
export const DEFAULT_KEY_PATTERN = '{integration}/{yyyy}/{MM}/{dd}/{jobId}/{filename}';

/**
 * Largest `ingest.maxBodyBytes`: a body this large still fits Lambda's 6 MB synchronous event on AWS once API
 * Gateway has put it in the event (JSON-escaped, or base64 for a body it takes as binary: 4 bytes for 3) with
 * the headers, so every body over the limit gets docrelay's 413 rather than a gateway error (docs/deploy.md).
 */
export const MAX_BODY_BYTES_LIMIT = 4_500_000;

/** `service`: where the Document Generation Service is and how docrelay talks to it. */
export const ServiceConfigSchema = z
  .strictObject({
    baseUrl: httpsUrl().describe('Service root; every operation is under /v1.0.'),
    apiKeySecret: secretName
      .default('docrelay/service-api-key')
      .describe('Name of the secret holding the API key (AWS: Secrets Manager).'),
    downloadOrigins: z
      .array(origin)
      .default([])
      .describe("Origins allowed for generated files' download links besides the service's own."),
    maxConcurrency: z
      .number()
      .int('must be a whole number')
      .min(1)
      .max(100)
      .default(4)
      .describe('Generations in flight at most.'),
    timeoutSeconds: z
      .number()
      .int('must be a whole number')
      .min(1)
      .max(300)
      .default(30)
      .describe('Timeout of one request to the service, in seconds.'),
    linkLifetimeSeconds: z
      .number()
      .int('must be a whole number')
      .min(1)
      .max(86_400)
      .optional()
      .describe(
        "How long the service's download links live, in seconds. Unset: learned from the downloads the service refuses as expired (55 minutes until one is).",
      ),
  })
  .describe('The Document Generation Service.');

const keyPattern = z
  .string()
  .min(1)
  .superRefine((pattern, ctx) => {
    const known: readonly string[] = KEY_PATTERN_PLACEHOLDERS;
    const used = [...pattern.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1] ?? '');
    for (const name of used) {
      if (!known.includes(name)) {
        ctx.addIssue({
          code: 'custom',
          message: `unknown placeholder {${name}}; known: ${known.map((k) => `{${k}}`).join(', ')}`,
        });
      }
    }
    if (/[{}]/.test(pattern.replace(/\{[^{}]*\}/g, ''))) {
      ctx.addIssue({ code: 'custom', message: 'unbalanced "{" or "}"' });
    }
    if (pattern.startsWith('/')) {
      ctx.addIssue({ code: 'custom', message: 'an S3 key must not start with "/"' });
    }
    const has = (name: string) => used.includes(name);
    // Two files must never land on the same key: one placeholder names the job or file, one the file itself.
    if (!has('jobId') && !has('documentId') && !has('fileId')) {
      ctx.addIssue({
        code: 'custom',
        message: 'must contain {jobId}, {documentId} or {fileId}, so that every document gets its own key',
      });
    }
    if (!has('filename') && !has('fileId')) {
      ctx.addIssue({
        code: 'custom',
        message:
          'must contain {filename} or {fileId}, so that the files of one document do not overwrite each other',
      });
    }
  });

/** `storage`: where generated files land in S3. */
export const StorageConfigSchema = z
  .strictObject({
    keyPattern: keyPattern
      .default(DEFAULT_KEY_PATTERN)
      .describe(
        `S3 key of each file; placeholders: ${KEY_PATTERN_PLACEHOLDERS.map((k) => `{${k}}`).join(' ')}.`,
      ),
  })
  .describe('Where generated files are stored.');

/** `ingest`: limits of the webhook endpoint. */
export const IngestConfigSchema = z
  .strictObject({
    maxBodyBytes: z
      .number()
      .int('must be a whole number')
      .min(1)
      .max(
        MAX_BODY_BYTES_LIMIT,
        `must be at most ${MAX_BODY_BYTES_LIMIT} (what fits Lambda's 6 MB event on AWS)`,
      )
      .default(1_048_576)
      .describe('Largest accepted webhook body, in bytes (413 above).'),
  })
  .describe('Limits of the webhook endpoint.');

/** `jobs`: how long a job keeps trying. */
export const JobsConfigSchema = z
  .strictObject({
    maxAttempts: z
      .number()
      .int('must be a whole number')
      .min(1)
      .max(1000)
      .default(10)
      .describe(
        'Attempts a job may start before it fails with ATTEMPTS_EXHAUSTED (for example when its worker dies on it every time). Attempts that end waiting out a service outage do not count.',
      ),
  })
  .describe('Limits of a job.');
