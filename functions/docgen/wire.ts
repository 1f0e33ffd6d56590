/**
 * The service's answers as they travel (docs: /work/shared/docgen-service-interface.md) and their parsing.
 * The resource types in `types.ts` are derived from these schemas, so a field is written once. Strict on what
 * the client needs, lenient on the rest: nullish text becomes '', ids may come as numbers, unknown keys of
 * templates are kept. `zod/mini` keeps the validator small on the Lambda path.
 */
import * as z from 'zod/mini';
import { DocgenBadResponseError } from './errors';
import { scrubText } from './redact';

const idSchema = z.pipe(
  z.union([z.string().check(z.minLength(1)), z.number()]),
  z.transform((value) => String(value)),
);
const textOr = (fallback: string) =>
  z.pipe(
    z.nullish(z.string()),
    z.transform((value) => value ?? fallback),
  );
const optionalText = z.optional(
  z.pipe(
    z.nullish(z.string()),
    z.transform((value) => value ?? undefined),
  ),
);

/** A workspace. */
export const workspaceSchema = z.looseObject({ id: idSchema, displayName: textOr('') });
/** The workspace list: `{ value: [Workspace] }`. */
export const workspaceListSchema = z.looseObject({ value: z.array(workspaceSchema) });

/** A property a template file uses. */
export const usedPropertySchema = z.looseObject({
  name: z.string(),
  required: z.pipe(
    z.nullish(z.boolean()),
    z.transform((value) => value ?? false),
  ),
});

/** One file of a template. */
export const templateFileSchema = z.looseObject({
  id: idSchema,
  filename: z.string(),
  mimeType: textOr(''),
  size: z.pipe(
    z.nullish(z.number()),
    z.transform((value) => value ?? 0),
  ),
  createdDateTime: textOr(''),
  lastModifiedDateTime: textOr(''),
  usedProperties: z.optional(z.array(usedPropertySchema)),
});

/**
 * A template property (merge field). Observed types are `text`, `date` and `select`; the product also knows
 * `string`, `boolean`, `integer`, `number`, `object`. Any other type passes through: only `name` and `type`
 * are required, and a default of another JSON type arrives as its JSON text rather than failing the template.
 */
export const templatePropertySchema = z.looseObject({
  type: z.string(),
  name: z.string(),
  label: z.optional(z.string()),
  description: optionalText,
  allowedValues: z.optional(z.array(z.string())),
  defaultValue: z.optional(
    z.pipe(
      z.unknown(),
      z.transform((value): string | undefined =>
        value === undefined || value === null
          ? undefined
          : typeof value === 'string'
            ? value
            : JSON.stringify(value),
      ),
    ),
  ),
  multipleValues: z.optional(z.boolean()),
  readOnly: z.optional(z.boolean()),
});

/** A template as listed (no `properties`) or read singly (with `properties`). */
export const templateSchema = z.looseObject({
  id: idSchema,
  name: z.string(),
  description: optionalText,
  createdDateTime: textOr(''),
  files: z.pipe(
    z.nullish(z.array(templateFileSchema)),
    z.transform((value) => value ?? []),
  ),
  properties: z.optional(z.array(templatePropertySchema)),
});

/** A page of the template list. */
export const templatePageSchema = z.looseObject({
  value: z.array(templateSchema),
  '@odata.nextLink': optionalText,
});

/**
 * A generated file, normalised: the link is read from either spelling of its field (the interface page
 * prints `@api.downloadUrl` and also writes `@api.downloadURL`) and becomes `downloadUrl`.
 */
export const documentFileSchema = z.pipe(
  z
    .object({
      id: idSchema,
      mimeType: textOr('application/octet-stream'),
      filename: z.string().check(z.minLength(1)),
      size: z.number().check(z.nonnegative()),
      templateFileReference: z.optional(
        z.object({ id: idSchema, name: z.optional(z.string()), templateId: z.optional(idSchema) }),
      ),
      isTemporary: z.optional(z.boolean()),
      '@api.downloadUrl': z.optional(z.string().check(z.minLength(1))),
      '@api.downloadURL': z.optional(z.string().check(z.minLength(1))),
    })
    .check(
      z.refine((file) => file['@api.downloadUrl'] !== undefined || file['@api.downloadURL'] !== undefined, {
        message: 'a generated file has no @api.downloadUrl',
      }),
    ),
  z.transform(({ '@api.downloadUrl': lower, '@api.downloadURL': upper, ...rest }) => ({
    ...rest,
    downloadUrl: (lower ?? upper) as string,
  })),
);

/** A generated document, normalised. */
export const documentSchema = z.object({
  id: idSchema,
  name: textOr(''),
  data: z.pipe(
    z.nullish(z.record(z.string(), z.unknown())),
    z.transform((value): Record<string, unknown> => value ?? {}),
  ),
  templateReference: z.optional(z.object({ id: idSchema, name: z.optional(z.string()) })),
  files: z.array(documentFileSchema).check(z.minLength(1)),
});

/** Any of the schemas above. */
export type WireSchema<T> = z.ZodMiniType<T>;

/**
 * Parses an answer's text with `schema`. A body that is not JSON or not the documented shape is a
 * `DocgenBadResponseError` naming issue paths only, never the received values (which may hold tokens).
 */
export function parseAnswer<T>(
  operation: string,
  status: number,
  text: string,
  schema: WireSchema<T>,
  secrets: readonly string[],
): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new DocgenBadResponseError(
      `${operation}: the service answered HTTP ${status} with a body that is not JSON`,
      { operation, status },
    );
  }
  const result = z.safeParse(schema, json);
  if (result.success) return result.data;
  const issues = result.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
  throw new DocgenBadResponseError(
    `${operation}: the service's answer (HTTP ${status}) is not the documented shape: ${scrubText(issues, secrets)}`,
    { operation, status },
  );
}
