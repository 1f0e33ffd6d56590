/** Reading request bodies and writing JSON answers, the way every emulator route does. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { codeOfStatus, type EmulatorErrorBody, EmulatorHttpError } from './errors';

/** Content type of every JSON answer. */
export const jsonContentType = 'application/json; charset=utf-8';

// Past the limit the rest of an upload is read and dropped (so the client sees the 413 rather than a reset),
// but only up to this much more; beyond it the answer is sent at once and the connection closed.
const drainAllowanceBytes = 16 * 1024 * 1024;

/** Writes `body` as JSON with `status`. */
export function writeJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': jsonContentType,
    'content-length': String(Buffer.byteLength(text)),
    'cache-control': 'no-store',
  });
  res.end(text);
}

/** The error body of `error` (its chosen shape, the real one not being shown). */
export const errorBody = (error: EmulatorHttpError): EmulatorErrorBody => ({
  error: { code: error.code, message: error.message },
});

/** A generic error for `status`, without internals. */
export const genericError = (status: number): EmulatorHttpError =>
  new EmulatorHttpError(
    status,
    codeOfStatus(status),
    status >= 500 ? 'Internal server error' : `HTTP ${status}`,
  );

/** True when `value` is a JSON media type (`application/json` or `application/*+json`, any parameters). */
export function isJsonContentType(value: string | undefined): boolean {
  const mediaType = (value ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return mediaType === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType);
}

/** Reads a request body of at most `limitBytes`; over it, rejects with 413 and `tooLargeMessage`. */
export function readBody(
  req: IncomingMessage,
  limitBytes: number,
  tooLargeMessage = 'Request entity too large',
): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const tooLarge = (): EmulatorHttpError =>
      new EmulatorHttpError(413, 'PayloadTooLarge', tooLargeMessage, { connection: 'close' });
    const declared = Number(req.headers['content-length'] ?? Number.NaN);
    let over = Number.isFinite(declared) && declared > limitBytes;
    let settled = false;
    const chunks: Buffer[] = [];
    let received = 0;
    const settle = (error?: EmulatorHttpError): void => {
      if (settled) return;
      settled = true;
      if (error !== undefined) reject(error);
      else resolve(Buffer.concat(chunks));
    };
    if (Number.isFinite(declared) && declared > limitBytes + drainAllowanceBytes) {
      req.resume();
      settle(tooLarge());
      return;
    }
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > limitBytes) over = true;
      if (!over) chunks.push(chunk);
      else {
        chunks.length = 0;
        if (received > limitBytes + drainAllowanceBytes) settle(tooLarge());
      }
    });
    req.on('end', () => settle(over ? tooLarge() : undefined));
    req.on('error', () =>
      settle(new EmulatorHttpError(400, 'BadRequest', 'The request body could not be read')),
    );
  });
}
