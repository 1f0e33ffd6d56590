/**
 * The one schema of docrelay's YAML configuration: its types, runtime validation and the editors' JSON
 * Schema all come from here. lib/ imports it too, so it imports only zod, jsonata and the sender registry.
 * The sections live in schema-*.ts and are re-exported here.
 */
import { z } from 'zod';
import { always, describeInput, uniqueNames } from './schema-fields';
import type { DocumentRuleSchema, RespondConfigSchema, TemplateRefSchema } from './schema-integration';
import { IntegrationConfigSchema } from './schema-integration';
import {
  IngestConfigSchema,
  JobsConfigSchema,
  ServiceConfigSchema,
  StorageConfigSchema,
} from './schema-sections';

export {
  DocumentRuleSchema,
  IntegrationConfigSchema,
  RespondConfigSchema,
  TemplateRefSchema,
} from './schema-integration';
export {
  DEFAULT_KEY_PATTERN,
  IngestConfigSchema,
  JobsConfigSchema,
  KEY_PATTERN_PLACEHOLDERS,
  MAX_BODY_BYTES_LIMIT,
  ServiceConfigSchema,
  StorageConfigSchema,
} from './schema-sections';
export { VerifyConfigSchema } from './schema-verify';

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
