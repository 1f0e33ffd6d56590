/**
 * The manifest of a sample template (`manifest.yaml` or `manifest.json` beside its files): what the file tags
 * cannot say. Properties themselves come from the tags; the manifest adds their type, label, description,
 * allowed and default values, which properties each file requires, ids and timestamps.
 */
import { z } from 'zod';

const isoUtc = z.iso.datetime({ offset: false });

/** Metadata of one property; a property the manifest does not describe is plain `text`. */
export const manifestPropertySchema = z.strictObject({
  type: z.string().min(1),
  label: z.string().optional(),
  description: z.string().optional(),
  allowedValues: z.array(z.string()).min(1).optional(),
  defaultValue: z.string().optional(),
  /** The property takes a JSON array of values of its type. @default false */
  multipleValues: z.boolean().optional(),
});

/** One file of the template. */
export const manifestFileSchema = z.strictObject({
  id: z.string().regex(/^\d+$/, 'file ids are numeric strings'),
  /** File name inside the template's folder. */
  filename: z.string().min(1),
  /** @default from the extension: .docx or .txt */
  mimeType: z.string().optional(),
  /** Properties that need a value for this file. @default [] */
  required: z.array(z.string()).default([]),
  /** @default the template's createdDateTime */
  createdDateTime: isoUtc.optional(),
  /** @default the file's createdDateTime */
  lastModifiedDateTime: isoUtc.optional(),
  /**
   * Pads every generated file to this many bytes with deterministic filler streamed on the fly (text files
   * only), for benchmarks of large downloads. @default no padding
   */
  padToBytes: z.number().int().min(0).optional(),
});

/** A template manifest. */
export const templateManifestSchema = z
  .strictObject({
    id: z.string().regex(/^\d+$/, 'template ids are numeric strings'),
    name: z.string().min(1),
    description: z.string().optional(),
    createdDateTime: isoUtc,
    /** Inactive templates are hidden from the list and answer 404. @default true */
    active: z.boolean().default(true),
    properties: z.record(z.string(), manifestPropertySchema).default({}),
    files: z.array(manifestFileSchema).min(1),
  })
  .superRefine((manifest, ctx) => {
    for (const [name, property] of Object.entries(manifest.properties)) {
      if (
        property.type === 'object' &&
        (property.allowedValues !== undefined || property.defaultValue !== undefined)
      ) {
        ctx.addIssue({
          code: 'custom',
          path: ['properties', name],
          message: 'an object takes neither allowedValues nor a (text) defaultValue',
        });
      }
      if (property.type === 'select' && property.allowedValues === undefined) {
        ctx.addIssue({ code: 'custom', path: ['properties', name], message: 'a select needs allowedValues' });
      }
      if (
        property.defaultValue !== undefined &&
        property.allowedValues !== undefined &&
        !property.allowedValues.includes(property.defaultValue)
      ) {
        ctx.addIssue({
          code: 'custom',
          path: ['properties', name, 'defaultValue'],
          message: 'the default must be one of allowedValues',
        });
      }
    }
    const ids = manifest.files.map((file) => file.id);
    if (new Set(ids).size !== ids.length) {
      ctx.addIssue({ code: 'custom', path: ['files'], message: 'file ids must be unique' });
    }
  });

/** A parsed template manifest. */
export type TemplateManifest = z.infer<typeof templateManifestSchema>;

/** Parses a manifest, naming `source` in the error. */
export function parseManifest(value: unknown, source: string): TemplateManifest {
  const parsed = templateManifestSchema.safeParse(value);
  if (!parsed.success)
    throw new Error(`invalid template manifest ${source}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
