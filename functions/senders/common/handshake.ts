import type { HandshakeAnswer } from '../types';

/** A JSON object in a body, or undefined for anything else (the handshake then does not apply). */
export function jsonObjectOf(rawBody: Uint8Array): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(rawBody).toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A 200 answer with a JSON body. */
export const jsonAnswer = (body: unknown): HandshakeAnswer => ({
  status: 200,
  contentType: 'application/json',
  body: JSON.stringify(body),
});

/** A 200 answer with a text body. */
export const textAnswer = (body: string, headers?: Readonly<Record<string, string>>): HandshakeAnswer => ({
  status: 200,
  contentType: 'text/plain',
  body,
  ...(headers === undefined ? {} : { headers }),
});
