import { SignatureError } from './errors';

/** A JSON object parsed from a body, or undefined when the bytes are not one. */
export function parseJsonObject(rawBody: Buffer): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return undefined;
  }
  return isObject(value) ? value : undefined;
}

/** True for a plain JSON object (not an array, not null). */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** An own field of an object, never one inherited from Object.prototype. */
export const ownField = (value: unknown, key: string): unknown =>
  isObject(value) && Object.hasOwn(value, key) ? value[key] : undefined;

/** The bytes parsed as a JSON object for signing (`docrelay send`); anything else cannot be signed. */
export function requireJsonObject(
  rawBody: Buffer,
  refuse: (message: string) => Error,
  what: string,
): Record<string, unknown> {
  const body = parseJsonObject(rawBody);
  if (body === undefined) throw refuse(`${what} must be a JSON object`);
  return body;
}

/** Refuses a delivery whose signature should be in the body but is not. */
export const missingInBody = (what: string): SignatureError =>
  new SignatureError('SIGNATURE_MISSING', `the body carries no ${what}`);
