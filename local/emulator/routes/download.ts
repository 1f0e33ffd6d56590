/** `GET /download?version=1.0&fileId=&token=`: a generated file, no key needed; faults may fail or truncate it. */
import type { ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { filePrefix, fileStream, type StoredFile } from '../download-links';
import { EmulatorHttpError, methodNotAllowed } from '../errors';
import { type Exchange, recordAnswer } from '../exchange';
import { genericError } from '../http-io';
import type { EmulatorState } from '../state';

/** Path of download links. */
export const downloadPath = '/download';

/** Streams the file of a live link, or answers 404 for an unknown, wrong or expired one. */
export async function downloadRoute(state: EmulatorState, ex: Exchange): Promise<void> {
  const { stats, links, dice } = state.setup;
  stats.downloadRequested(ex.req.headers);
  if (ex.req.method !== 'GET') throw methodNotAllowed('GET');
  const file = links.find(ex.url.searchParams.get('fileId') ?? '', ex.url.searchParams.get('token') ?? '');
  if (file === undefined) {
    throw new EmulatorHttpError(404, 'NotFound', 'The download link is unknown or has expired');
  }
  const faults = state.faults;
  if (dice.chance(faults.downloadFailRate)) {
    ex.fault = 'downloadFail';
    throw genericError(500);
  }
  const truncate = dice.chance(faults.downloadTruncateRate);
  if (truncate) ex.fault = 'downloadTruncate';
  recordAnswer(state, ex, 200);
  stats.downloadServed();
  ex.res.writeHead(200, downloadHeaders(file));
  if (truncate) return sendTruncated(ex.res, file);
  await pipeline(fileStream(file), ex.res);
}

/** The full Content-Length, part of the body, then a destroyed socket. */
function sendTruncated(res: ServerResponse, file: StoredFile): void {
  const part = filePrefix(file, Math.min(Math.floor(file.size / 2), 1024 * 1024));
  res.write(part, () => res.socket?.destroy());
}

function downloadHeaders(file: StoredFile): Record<string, string> {
  const ascii = file.filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return {
    'content-type': file.mimeType.startsWith('text/') ? `${file.mimeType}; charset=utf-8` : file.mimeType,
    'content-length': String(file.size),
    'content-disposition': `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(file.filename)}`,
    'cache-control': 'no-store',
  };
}
