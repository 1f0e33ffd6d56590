/**
 * Where the service's interface page says two things, a switchable reading, so a client is tested against
 * both: the create status (201 in the text, 200 in the example), the link field (`@api.downloadUrl` or
 * `@api.downloadURL`) and the 413 message ("Request entity too large" or "Payload too large").
 */
import { z } from 'zod';

/** Which reading of each documented ambiguity the emulator answers with. */
export interface ServiceReadings {
  /** Status of a successful create document. @default 201 */
  createStatus: 200 | 201;
  /** Field of a generated file that holds its download link. @default '@api.downloadUrl' */
  linkField: '@api.downloadUrl' | '@api.downloadURL';
  /** Message of a 413 answer. @default 'Request entity too large' */
  payloadTooLargeMessage: 'Request entity too large' | 'Payload too large';
}

/** The readings of the page's example (201 as its text states, `@api.downloadUrl`, "Request entity too large"). */
export const defaultReadings: Readonly<ServiceReadings> = {
  createStatus: 201,
  linkField: '@api.downloadUrl',
  payloadTooLargeMessage: 'Request entity too large',
};

/** Schema of a partial ServiceReadings as sent to `PUT /_emulator/readings`: unknown keys are rejected. */
export const readingsPatchSchema = z.strictObject({
  createStatus: z.union([z.literal(200), z.literal(201)]).optional(),
  linkField: z.enum(['@api.downloadUrl', '@api.downloadURL']).optional(),
  payloadTooLargeMessage: z.enum(['Request entity too large', 'Payload too large']).optional(),
});

/** Validates `patch` and merges it over `current`; throws a readable error naming the allowed values. */
export function mergeReadings(current: ServiceReadings, patch: unknown): ServiceReadings {
  const parsed = readingsPatchSchema.safeParse(patch);
  if (!parsed.success) throw new Error(`invalid readings: ${z.prettifyError(parsed.error)}`);
  const next: ServiceReadings = { ...current };
  for (const [key, value] of Object.entries(parsed.data)) {
    if (value !== undefined) Object.assign(next, { [key]: value });
  }
  return next;
}
