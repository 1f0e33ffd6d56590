import { randomBytes } from 'node:crypto';
import type { VerifyConfig, VerifyInput } from '../../../functions/senders';
import {
  SignatureError,
  type SignatureErrorCode,
  VerifyConfigError,
  verifyDelivery,
} from '../../../functions/senders';

/** A fixed receive time, so tolerance tests never depend on the wall clock. */
export const NOW = new Date('2026-03-01T12:00:00.000Z');
/** NOW in whole Unix seconds. */
export const NOW_S = Math.floor(NOW.getTime() / 1000);
/** A realistic JSON body, exactly as a sender would put it on the wire. */
export const BODY_TEXT = '{"action":"published","release":{"name":"v1.2.0","tag_name":"v1.2.0"}}';
/** BODY_TEXT as the raw bytes verification sees. */
export const BODY = Buffer.from(BODY_TEXT);
/** The same JSON value re-serialised with different spacing: must never verify. */
export const RESERIALISED = Buffer.from(JSON.stringify(JSON.parse(BODY_TEXT), null, 2));

/** A random printable secret, long enough never to collide with anything in a message by chance. */
export const randomSecret = (prefix = ''): string => `${prefix}${randomBytes(24).toString('hex')}`;

/** BODY with one byte changed. */
export const tamper = (body: Buffer, index = Math.floor(body.length / 2)): Buffer => {
  const copy = Buffer.from(body);
  copy[index] = (copy[index] ?? 0) ^ 0x01;
  return copy;
};

/** A verify input with sensible defaults. */
export const input = (
  config: VerifyConfig,
  fields: Partial<Omit<VerifyInput, 'config'>> = {},
): VerifyInput => ({
  rawBody: BODY,
  headers: {},
  secrets: [],
  now: NOW,
  url: TEST_URL,
  method: 'POST',
  ...fields,
  config,
});

/** Runs a function that must throw, and returns what it threw. */
export const thrown = (run: () => unknown): unknown => {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw, but the call returned');
};

/**
 * Asserts nothing secret (secret values, header values such as signatures, the body, and any `extra`
 * values like the expected signature) appears in the error's message, detail, JSON or string form.
 * Values shorter than `minLength` are skipped: they could occur in a message by coincidence. (The stack is
 * left out: its first line is String(error) and the rest is file paths, which random text can match.)
 */
export const expectNoLeak = (
  error: unknown,
  verifyInput: VerifyInput,
  extra: readonly string[] = [],
  minLength = 8,
): void => {
  const rendered = [
    error instanceof Error ? error.message : '',
    error instanceof SignatureError ? error.detail : '',
    JSON.stringify(error),
    String(error),
  ].join('\n');
  const forbidden = [
    ...verifyInput.secrets,
    ...Object.values(verifyInput.headers),
    verifyInput.rawBody.toString('utf8'),
    ...extra,
  ].filter((value) => value.length >= minLength);
  for (const value of forbidden) expect(rendered).not.toContain(value);
};

/** Asserts verification refuses with this code, and that the error leaks nothing. */
export const expectRefused = (
  verifyInput: VerifyInput,
  code: SignatureErrorCode,
  extra: readonly string[] = [],
): SignatureError => {
  const error = thrown(() => verifyDelivery(verifyInput));
  expect(error).toBeInstanceOf(SignatureError);
  const signatureError = error as SignatureError;
  expect({ code: signatureError.code, retryable: signatureError.retryable }).toEqual({
    code,
    retryable: false,
  });
  expect(signatureError.detail).toBe(signatureError.message);
  expect(signatureError.detail.length).toBeLessThan(120);
  expectNoLeak(error, verifyInput, extra);
  return signatureError;
};

/** Asserts the integration's configuration is refused, and that the error leaks nothing. */
export const expectConfigError = (verifyInput: VerifyInput): VerifyConfigError => {
  const error = thrown(() => verifyDelivery(verifyInput));
  expect(error).toBeInstanceOf(VerifyConfigError);
  expect((error as VerifyConfigError).code).toBe('VERIFY_CONFIG_INVALID');
  expectNoLeak(error, verifyInput);
  return error as VerifyConfigError;
};

/** The public URL test deliveries are posted to. */
export const TEST_URL = 'https://hooks.example.test/v1/hooks/orders?source=test';
