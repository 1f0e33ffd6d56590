/**
 * The service's answers as they travel, and their parsing (`types.ts` derives from these schemas). Strict on
 * what the client needs and lenient on the rest, so a quirk never fails a template or a document already
 * made; `zod/mini` keeps the validator small on the Lambda path.
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
/** An optional flag: `null` reads as absent. */
const optionalFlag = z.optional(
  z.pipe(
    z.nullish(z.boolean()),
    z.transform((value) => value ?? undefined),
  ),
);
/** An optional list: `null` reads as absent. */
const optionalArray = <T extends z.core.SomeType>(item: T) =>
  z.optional(
    z.pipe(
      z.nullish(z.array(item)),
      z.transform((value) => value ?? undefined),
    ),
  );
/** An optional object: `null` reads as absent. */
const optionalObject = <T extends z.core.SomeType>(schema: T) =>
  z.optional(
    z.pipe(
      z.nullish(schema),
      z.transform((value) => value ?? undefined),
    ),
  );
/**
 * The allowed values of a property: strings on the interface page; a number or a flag (a select of another
 * property type) reads as its text, the form a mapped value is compared in. `null` entries are dropped.
 */
const allowedValuesSchema = z.optional(
  z.pipe(
    z.nullish(z.array(z.unknown())),
    z.transform((values): string[] | undefined =>
      values
        ?.filter((value) => value !== null && value !== undefined)
        .map((value) => (typeof value === 'object' ? JSON.stringify(value) : String(value))),
    ),
  ),
);
/**
 * A generated file's `size`, an integer of no stated unit: a numeric string reads as its number, anything
 * missing, negative or not a number as unknown, since the copy checks the transport's length first.
 */
const fileSizeSchema = z.optional(
  z.pipe(
    z.unknown(),
    z.transform((value): number | undefined => {
      const size = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
      return typeof size === 'number' && Number.isSafeInteger(size) && size >= 0 ? size : undefined;
    }),
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
  usedProperties: optionalArray(usedPropertySchema),
});

/**
 * A template property (merge field). Types beyond the observed `text`, `date` and `select` pass through: only
 * `name` and `type` are required, and a default of another JSON type arrives as its JSON text.
 */
export const templatePropertySchema = z.looseObject({
  type: z.string(),
  name: z.string(),
  label: optionalText,
  description: optionalText,
  allowedValues: allowedValuesSchema,
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
  multipleValues: optionalFlag,
  readOnly: optionalFlag,
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
  properties: optionalArray(templatePropertySchema),
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
      size: fileSizeSchema,
      templateFileReference: optionalObject(
        z.object({ id: idSchema, name: optionalText, templateId: z.optional(idSchema) }),
      ),
      isTemporary: optionalFlag,
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
  templateReference: optionalObject(z.object({ id: idSchema, name: optionalText })),
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
