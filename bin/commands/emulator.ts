/**
 * `docrelay emulator`: runs the Document Generation Service emulator on its own, writes its base URL to the
 * data directory's endpoints.json (as `emulator`, apart from a running stack's own service, so the other
 * commands find it without a stack and a stack's commands keep theirs) and runs until SIGINT or SIGTERM.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { readLocalSettings } from '../../functions/commons/env';
import type { ServiceReadings } from '../../local/emulator/readings';
import { startEmulator } from '../../local/emulator/server';
import { ensureDevSecrets, readEndpoints, stackRunning, writeEndpoints } from '../../local/state-files';
import { CliError, type CommandContext } from './types';

/** Name of the local secret holding the service API key. */
export const serviceApiKeySecret = 'docrelay/service-api-key';

/** Default port of the standalone emulator. */
export const defaultEmulatorPort = 4010;

/** The options of `docrelay emulator`, as the program parses them. */
export interface EmulatorCliOptions {
  readonly port: number;
  readonly host: string;
  readonly linkTtl?: number;
  readonly templates?: string;
  readonly createStatus?: '200' | '201';
  readonly linkField?: 'downloadUrl' | 'downloadURL';
  readonly payloadTooLarge?: ServiceReadings['payloadTooLargeMessage'];
  readonly extraTemplates?: number;
  readonly syntheticFileBytes?: number;
  readonly seed?: number;
}

/** The readings options (the interface page's ambiguities); undefined where not given. */
function readingOptions(options: EmulatorCliOptions): Partial<ServiceReadings> {
  return {
    ...(options.createStatus === undefined
      ? {}
      : { createStatus: options.createStatus === '200' ? 200 : 201 }),
    ...(options.linkField === undefined ? {} : { linkField: `@api.${options.linkField}` as const }),
    ...(options.payloadTooLarge === undefined ? {} : { payloadTooLargeMessage: options.payloadTooLarge }),
  };
}

/** Where the API key comes from: DOCGEN_API_KEY, else the local secrets file (created on first use). */
async function resolveApiKey(ctx: CommandContext): Promise<{ apiKey: string; source: string }> {
  const settings = readLocalSettings(ctx.env, ctx.cwd);
  if (settings.docgenApiKey !== undefined) return { apiKey: settings.docgenApiKey, source: 'DOCGEN_API_KEY' };
  await ensureDevSecrets(settings.secretsFile, [serviceApiKeySecret]);
  const secrets: unknown = JSON.parse(await readFile(settings.secretsFile, 'utf8'));
  const value =
    typeof secrets === 'object' && secrets !== null
      ? (secrets as Record<string, unknown>)[serviceApiKeySecret]
      : undefined;
  if (typeof value !== 'string' || value === '') {
    throw new CliError(`secret ${serviceApiKeySecret} is missing from ${settings.secretsFile}`);
  }
  return { apiKey: value, source: `secret ${serviceApiKeySecret} in ${settings.secretsFile}` };
}

/** Runs the emulator until `signal` aborts (the CLI aborts it on SIGINT or SIGTERM). */
export async function runEmulator(
  ctx: CommandContext,
  options: EmulatorCliOptions,
  signal: AbortSignal,
): Promise<number> {
  const linkTtlSeconds = options.linkTtl;
  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const { apiKey, source } = await resolveApiKey(ctx);
  const emulator = await startEmulator({
    port: options.port,
    host: options.host,
    apiKey,
    linkTtlMs: linkTtlSeconds === undefined ? undefined : linkTtlSeconds * 1000,
    extraTemplates: options.extraTemplates,
    syntheticFileBytes: options.syntheticFileBytes,
    seed: options.seed,
    readings: readingOptions(options),
    ...(options.templates === undefined ? {} : { templatesDir: resolve(ctx.cwd, options.templates) }),
  });
  const mine = { baseUrl: emulator.url, pid: process.pid };
  try {
    // Its own entry: a stack running on the same data directory keeps its service (runningServiceUrl).
    await writeEndpoints(settings.dataDir, { emulator: mine });
    // One write: a reader that waits for the ready line sees the hint beside it.
    const current = await readEndpoints(settings.dataDir);
    const hint =
      current !== undefined && stackRunning(current)
        ? `  a local stack runs on ${settings.dataDir} with its own service; the CLI keeps using that one (set DOCGEN_BASE_URL=${emulator.url} to use this emulator)\n`
        : '';
    ctx.stdout.write(`docrelay emulator ready at ${emulator.url} (API key: ${source})\n${hint}`);
    if (!signal.aborted) {
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    }
  } finally {
    await emulator.stop();
    // Forget the endpoint only if it is still ours: another emulator may have started since.
    const current = await readEndpoints(settings.dataDir);
    if (current?.emulator?.baseUrl === mine.baseUrl && current.emulator.pid === mine.pid)
      await writeEndpoints(settings.dataDir, { emulator: undefined });
  }
  ctx.stdout.write('docrelay emulator stopped\n');
  return 0;
}

/** The `emulator` command: runs until SIGINT or SIGTERM, then stops cleanly and exits 0. */
export async function run(ctx: CommandContext, options: EmulatorCliOptions): Promise<number> {
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    return await runEmulator(ctx, options, controller.signal);
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
