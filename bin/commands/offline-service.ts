/**
 * The service for `--offline` commands: the emulator started in this process on loopback with a one-off key
 * and the given (or shipped) templates folder, so a mapping can be tried without a stack or a service.
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { DocgenClient } from '../../functions/docgen/client';
import { startEmulator } from '../../local/emulator/server';
import { CliError } from './types';

/** A client of an in-process emulator; `stop()` when done. */
export interface OfflineService {
  readonly client: DocgenClient;
  readonly url: string;
  stop(): Promise<void>;
}

/** Starts the in-process emulator with `templatesDir` (relative to cwd) or the shipped samples. */
export async function startOfflineService(cwd: string, templatesDir?: string): Promise<OfflineService> {
  const apiKey = randomBytes(16).toString('hex');
  let emulator: Awaited<ReturnType<typeof startEmulator>>;
  try {
    emulator = await startEmulator({
      port: 0,
      host: '127.0.0.1',
      apiKey,
      ...(templatesDir === undefined ? {} : { templatesDir: resolve(cwd, templatesDir) }),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new CliError(
      `cannot load the templates${templatesDir === undefined ? '' : ` of ${templatesDir}`}: ${message}`,
    );
  }
  const client = new DocgenClient({ baseUrl: emulator.url, apiKey: { get: async () => apiKey } });
  return { client, url: emulator.url, stop: () => emulator.stop() };
}
