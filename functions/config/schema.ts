/**
 * The one schema of docrelay's YAML configuration: the TypeScript types, the runtime validation and (through
 * `z.toJSONSchema`) the JSON Schema for editors all come from here. The CDK code in lib/ imports it too, so
 * it imports nothing but zod, jsonata and the sender registry (no Lambda, no AWS SDK): the verify block's
 * scheme list and option rules derive from the sender modules.
 */
import { z } from 'zod';
import { SECRET_VALUE_PREFIXES, SENDER_SCHEMES, schemesTaking, senderScheme } from '../senders/registry';
import type { OptionRule, VerifyConfig, VerifyOptionName } from '../senders/types';
import { checkExpressionSyntax } from './expressions';

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

const URL_SAFE_ID = /^[a-z0-9][a-z0-9-_]{0,63}$/i;
const LOOPBACK_HOST = /^(localhost|.+\.localhost|127(\.\d{1,3}){3}|\[::1\])$/i;
// Secrets Manager's name alphabet; a pasted secret *value* usually breaks it or has a telltale prefix.
const SECRET_NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

const describeInput = (input: unknown): string =>
  input === null
    ? 'null'
    : Array.isArray(input)
      ? 'a list'
      : typeof input === 'object'
        ? 'a mapping'
        : typeof input;

/** A JSONata expression: a non-empty string that compiles. YAML numbers and booleans get a hint to quote. */
const expression = (what: string) =>
  z
    .string({
      error: (issue) =>
        typeof issue.input === 'number' || typeof issue.input === 'boolean'
          ? `${what} must be a JSONata expression string; for the constant ${issue.input} write "${issue.input}" (quoted)`
          : undefined,
    })
    .min(1, `${what} must not be empty`)
    .superRefine((source, ctx) => {
      const problem = checkExpressionSyntax(source);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem.message });
    })
    .describe(`${what}: a JSONata expression`);

/** A string YAML might have read as a number (ids): the message tells the user to quote it. */
const quotedString = (what: string) =>
  z.string({
    error: (issue) =>
      typeof issue.input === 'number'
        ? `${what} must be a string: quote it, e.g. "${issue.input}" (a YAML number loses leading zeros)`
        : undefined,
  });

const isLoopback = (url: URL): boolean => LOOPBACK_HOST.test(url.hostname);

const httpsUrl = () =>
  z
    .url({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be an absolute URL') })
    .superRefine((text, ctx) => {
      const url = new URL(text);
      if (url.protocol === 'https:') return;
      if (url.protocol === 'http:' && isLoopback(url)) return;
      ctx.addIssue({
        code: 'custom',
        message: `must use https (http only for localhost, 127.0.0.1 or [::1]), got ${url.protocol}//${url.host}`,
      });
    });

const origin = httpsUrl().superRefine((text, ctx) => {
  const url = new URL(text);
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') {
    ctx.addIssue({
      code: 'custom',
      message: `a download origin is scheme://host[:port] only, e.g. ${url.origin} (no path or query)`,
    });
  }
});

const secretName = z
  .string()
  .min(1, 'a secret name must not be empty')
  .superRefine((name, ctx) => {
    if (SECRET_VALUE_PREFIXES.some((prefix) => name.startsWith(prefix))) {
      ctx.addIssue({
        code: 'custom',
        message:
          'this looks like a secret value: put the secret NAME here (e.g. docrelay/stripe-webhook) and its value in Secrets Manager or DOCRELAY_SECRETS_FILE',
      });
    } else if (!SECRET_NAME.test(name)) {
      ctx.addIssue({
        code: 'custom',
        message: 'a secret name uses only letters, digits and /_+=.@- (at most 512 characters)',
      });
    }
  });

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
/** What an option means for one scheme, with its default or that it is required. */
const ruleText = (rule: OptionRule<unknown>): string =>
  rule.required !== undefined
    ? `${rule.describe} (required${rule.mustBe === undefined ? '' : `: ${String(rule.mustBe)}`})`
    : rule.default !== undefined
      ? `${rule.describe} (default ${String(rule.default)})`
      : rule.describe;

/** "a, b: what it means there; c: ..." for an option, from the schemes that take it (same text grouped). */
const describeOption = (option: VerifyOptionName): string => {
  const groups = new Map<string, string[]>();
  for (const scheme of schemesTaking(option)) {
    const text = ruleText(scheme.options[option] as OptionRule<unknown>);
    groups.set(text, [...(groups.get(text) ?? []), scheme.name]);
  }
  return `${[...groups].map(([text, names]) => `${names.join(', ')}: ${text}`).join('; ')}.`;
};

// The option fields every scheme shares; which scheme takes which, and their defaults, come from the schemes.
const verifyOptionFields = {
  header: z
    .string()
    .regex(HEADER_NAME, 'must be an HTTP header name')
    .optional()
    .describe(describeOption('header')),
  encoding: z.enum(['hex', 'base64']).optional().describe(describeOption('encoding')),
  prefix: z.string().optional().describe(describeOption('prefix')),
  toleranceSeconds: z
    .number()
    .int('must be a whole number')
    .min(1)
    .max(86_400)
    .optional()
    .describe(describeOption('toleranceSeconds')),
  allowUnsigned: z.boolean().optional().describe(describeOption('allowUnsigned')),
  algorithm: z.enum(['sha1', 'sha256', 'sha512']).optional().describe(describeOption('algorithm')),
  signedContent: z.string().min(1).optional().describe(describeOption('signedContent')),
  timestampHeader: z
    .string()
    .regex(HEADER_NAME, 'must be an HTTP header name')
    .optional()
    .describe(describeOption('timestampHeader')),
  idHeader: z
    .string()
    .regex(HEADER_NAME, 'must be an HTTP header name')
    .optional()
    .describe(describeOption('idHeader')),
  topicArn: z
    .string()
    .regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_.-]{1,256}$/, 'must be an SNS topic ARN')
    .optional()
    .describe(describeOption('topicArn')),
  verifyTokenSecret: secretName.optional().describe(describeOption('verifyTokenSecret')),
} satisfies Record<VerifyOptionName, z.ZodType>;

const VERIFY_OPTION_NAMES = Object.keys(verifyOptionFields) as VerifyOptionName[];

/** `integrations[].verify`: how a delivery's authenticity is checked. */
export const VerifyConfigSchema = z
  .strictObject({
    scheme: z
      .enum(SENDER_SCHEMES, { error: `scheme must be one of ${SENDER_SCHEMES.join(', ')}` })
      .describe('Signature scheme of the sender.'),
    secret: z
      .union([secretName, z.array(secretName).min(1, 'give at least one secret name').max(5)])
      .optional()
      .describe('Secret name, or several while a secret is rotated (any of them verifies).'),
    ...verifyOptionFields,
  })
  .superRefine((verify, ctx) => {
    const scheme = senderScheme(verify.scheme);
    if (scheme === undefined) return;
    for (const option of VERIFY_OPTION_NAMES) {
      if (verify[option] === undefined || scheme.options[option] !== undefined) continue;
      const takers = schemesTaking(option).map(({ name }) => name);
      ctx.addIssue({
        code: 'custom',
        path: [option],
        message: `scheme ${scheme.name} does not take ${option} (only ${takers.join(', ')} ${takers.length === 1 ? 'does' : 'do'})`,
      });
    }
    if (!scheme.takesSecret && verify.secret !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['secret'], message: `scheme ${scheme.name} takes no secret` });
    } else if (scheme.takesSecret && verify.secret === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['secret'],
        message: `scheme ${scheme.name} requires secret (the name of the secret holding the signing key)`,
      });
    }
    for (const option of VERIFY_OPTION_NAMES) {
      const rule: OptionRule<unknown> | undefined = scheme.options[option];
      if (rule?.required === undefined) continue;
      const value = verify[option];
      if (value !== undefined && (rule.mustBe === undefined || value === rule.mustBe)) continue;
      ctx.addIssue({
        code: 'custom',
        path: [option],
        message: `scheme ${scheme.name} requires ${option}${rule.mustBe === undefined ? '' : `: ${String(rule.mustBe)}`} (${rule.required})`,
      });
    }
  })
  .transform((verify): VerifyConfig => {
    // Scheme defaults are filled here so every consumer (ingest, CLI send, CDK) sees the same values.
    const out: VerifyConfig = { ...verify };
    if (out.header !== undefined) out.header = out.header.toLowerCase();
    if (out.timestampHeader !== undefined) out.timestampHeader = out.timestampHeader.toLowerCase();
    if (out.idHeader !== undefined) out.idHeader = out.idHeader.toLowerCase();
    const options = senderScheme(verify.scheme)?.options ?? {};
    const filled = out as Record<VerifyOptionName, unknown>;
    for (const option of VERIFY_OPTION_NAMES) {
      const fallback = options[option]?.default;
      if (filled[option] === undefined && fallback !== undefined) filled[option] = fallback;
    }
    return out;
  })
  .describe('How deliveries are verified.');

const propertyName = z
  .string()
  .min(1)
  .refine((name) => !RESERVED_KEYS.has(name), 'this name is reserved (prototype pollution guard)');

// Uniqueness checks run even when some elements are invalid (zod skips refinements after an issue by
// default), so that a duplicate is reported in the same run as everything else; hence the defensive reads.
const always = (): boolean => true;

const uniqueNames =
  (field: 'id' | 'name', message: (name: string, first: number) => string) =>
  (items: unknown, ctx: z.RefinementCtx): void => {
    if (!Array.isArray(items)) return;
    const seen = new Map<string, number>();
    items.forEach((item: unknown, index) => {
      const name =
        typeof item === 'object' && item !== null ? (item as Record<string, unknown>)[field] : undefined;
      if (typeof name !== 'string') return;
      const key = name.toLowerCase();
      const first = seen.get(key);
      if (first === undefined) seen.set(key, index);
      else ctx.addIssue({ code: 'custom', path: [index, field], message: message(name, first) });
    });
  };

/** `integrations[].documents[].template`: which template (and file) a rule generates. */
export const TemplateRefSchema = z.strictObject({
  id: quotedString('template.id')
    .regex(/^\d+$/, 'template.id is the numeric id of a template, e.g. "9001" (see docrelay templates list)')
    .describe('Template id (a numeric string: quote it).'),
  fileId: quotedString('template.fileId')
    .min(1)
    .optional()
    .describe('Template file id; required when the template has several files.'),
});

/** `integrations[].documents[]`: a rule; when `when` holds, one document is generated. */
export const DocumentRuleSchema = z
  .strictObject({
    name: z
      .string()
      .regex(URL_SAFE_ID, 'a rule name is 1-64 letters, digits, "-" or "_", starting with a letter or digit')
      .describe('Rule name, unique within the integration.'),
    when: expression('when').optional().describe('JSONata predicate; the rule applies when it is truthy.'),
    template: TemplateRefSchema,
    data: z
      .record(propertyName, expression('a data value'))
      .describe('Template property name -> JSONata expression giving its value.'),
  })
  .describe('A rule: when it holds, one document is generated.');

const eventPattern = z
  .record(z.string(), z.unknown())
  .superRefine((pattern, ctx) => {
    const keys = Object.keys(pattern);
    if (keys.length === 0) ctx.addIssue({ code: 'custom', message: 'an event pattern must not be empty' });
    for (const key of keys) {
      const value = pattern[key];
      if (typeof value !== 'object' || value === null) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `an event pattern value is a list of matches (e.g. ["${String(value)}"]) or a nested mapping`,
        });
      }
    }
  })
  .describe('EventBridge event pattern, e.g. { source: ["myapp.orders"], detail-type: ["Order Paid"] }.');

/** `integrations[].respond`: a fixed answer to every accepted delivery (new, duplicate or matching no rule). */
export const RespondConfigSchema = z
  .strictObject({
    status: z
      .number()
      .int('must be a whole number')
      .min(200, 'a delivery that was accepted is answered with 2xx')
      .max(299, 'a delivery that was accepted is answered with 2xx')
      .default(200)
      .describe('HTTP status (2xx).'),
    contentType: z
      .string()
      .regex(/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+(\s*;.*)?$/i, 'must be a media type, e.g. text/plain')
      .max(200)
      .default('text/plain')
      .describe('Content-Type of the answer.'),
    body: z.string().max(10_000).default('').describe('The answer body, e.g. [accepted] or <Response/>.'),
  })
  .describe('A fixed answer for senders that expect one.');

/** `integrations[]`: one webhook source (and/or EventBridge event source). */
export const IntegrationConfigSchema = z
  .strictObject({
    id: z
      .string()
      .regex(
        URL_SAFE_ID,
        'an integration id is 1-64 letters, digits, "-" or "_", starting with a letter or digit',
      )
      .describe('Integration id; the webhook URL is POST /v1/hooks/{id}.'),
    verify: VerifyConfigSchema.optional().describe(
      'How webhooks are verified. Leave it out for an events-only integration: it then has no webhook URL.',
    ),
    publicUrl: z
      .url({
        protocol: /^https?$/,
        error: 'publicUrl is an http(s) URL, e.g. https://hooks.example.com/v1/hooks/orders',
      })
      .optional()
      .describe(
        'The URL the sender posts to, as it signs it (Twilio, Square, HubSpot...): set it behind a custom domain or proxy; default rebuilt from the request.',
      ),
    respond: RespondConfigSchema.optional().describe(
      'The answer to an accepted delivery, for senders that want one (Adyen: [accepted]); default 202 with JSON.',
    ),
    deliveryId: expression('deliveryId')
      .optional()
      .describe(
        'JSONata giving the delivery id (deduplication); default per scheme, else the SHA-256 of the body.',
      ),
    eventBridge: z
      .strictObject({ eventPattern })
      .optional()
      .describe('Also take matching EventBridge events as deliveries.'),
    documents: z
      .array(DocumentRuleSchema)
      .min(1, 'an integration needs at least one document rule')
      .superRefine(
        uniqueNames('name', (name, first) => `duplicate rule name "${name}" (also documents[${first}])`),
        {
          when: always,
        },
      ),
  })
  .superRefine((integration, ctx) => {
    if (integration.verify === undefined && integration.eventBridge === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['verify'],
        message:
          'an integration takes webhooks (give verify) or EventBridge events (give eventBridge), or both',
      });
    }
  })
  .describe('One source of deliveries and its document rules.');

/** The whole configuration file. */
export const DocrelayConfigSchema = z
  .strictObject({
    $schema: z.string().optional().describe('JSON Schema reference for editors; ignored.'),
    service: ServiceConfigSchema,
    storage: StorageConfigSchema.prefault({}),
    ingest: IngestConfigSchema.prefault({}),
    jobs: JobsConfigSchema.prefault({}),
    integrations: z
      .array(IntegrationConfigSchema)
      .min(1, 'configure at least one integration')
      .superRefine(
        uniqueNames(
          'id',
          (id, first) =>
            `duplicate integration id "${id}" (also integrations[${first}]; ids are case-insensitive)`,
        ),
        { when: always },
      ),
  })
  .describe('docrelay configuration');

/** The validated configuration, defaults filled. */
export type DocrelayConfig = z.output<typeof DocrelayConfigSchema>;
/** The configuration as written (defaults optional). */
export type DocrelayConfigInput = z.input<typeof DocrelayConfigSchema>;
/** `service` after validation. */
export type ServiceConfig = z.output<typeof ServiceConfigSchema>;
/** `storage` after validation. */
export type StorageConfig = z.output<typeof StorageConfigSchema>;
/** `ingest` after validation. */
export type IngestConfig = z.output<typeof IngestConfigSchema>;
/** An integration's `respond` after validation. */
export type RespondConfig = z.output<typeof RespondConfigSchema>;
/** One integration after validation. */
export type IntegrationConfig = z.output<typeof IntegrationConfigSchema>;
/** One document rule after validation. */
export type DocumentRule = z.output<typeof DocumentRuleSchema>;
/** A rule's template reference. */
export type TemplateRef = z.output<typeof TemplateRefSchema>;

/** A short description of a YAML value's type, for messages. */
export const describeValueType = describeInput;
