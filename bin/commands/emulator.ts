/**
 * `docrelay emulator`: runs the Document Generation Service emulator on its own, writes its base URL to the
 * data directory's endpoints.json (so the other commands find it) and runs until SIGINT or SIGTERM.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { readLocalSettings } from '../../functions/commons/env';
import type { ServiceReadings } from '../../local/emulator/readings';
import { startEmulator } from '../../local/emulator/server';
import { ensureDevSecrets, readEndpoints, writeEndpoints } from '../../local/state-files';
import { CliError, type CommandContext, type CommandRun } from './types';

/** Name of the local secret holding the service API key. */
export const serviceApiKeySecret = 'docrelay/service-api-key';

/** Default port of the standalone emulator. */
export const defaultEmulatorPort = 4010;

const usage =
  'usage: docrelay emulator [--port N] [--host 127.0.0.1] [--link-ttl SECONDS]\n' +
  '  --port       port to listen on (0 picks a free one) [4010]\n' +
  '  --host       interface to listen on [127.0.0.1]\n' +
  '  --link-ttl   lifetime of download links in seconds [3600]\n' +
  '  --create-status 200|201                  status of a successful create document [201]\n' +
  '  --link-field downloadUrl|downloadURL     field of the download link [downloadUrl]\n' +
  '  --payload-too-large "Request entity too large"|"Payload too large"   message of a 413\n';

/** Reads the readings options (the interface page's ambiguities); undefined where not given. */
function readingOptions(text: (name: string) => string | undefined): Partial<ServiceReadings> {
  const readings: Partial<ServiceReadings> = {};
  const status = text('create-status');
  if (status !== undefined) {
    if (status !== '200' && status !== '201')
      throw new CliError(`--create-status must be 200 or 201, got "${status}"`, 2);
    readings.createStatus = status === '200' ? 200 : 201;
  }
  const field = text('link-field');
  if (field !== undefined) {
    if (field !== 'downloadUrl' && field !== 'downloadURL') {
      throw new CliError(`--link-field must be downloadUrl or downloadURL, got "${field}"`, 2);
    }
    readings.linkField = `@api.${field}`;
  }
  const message = text('payload-too-large');
  if (message !== undefined) {
    if (message !== 'Request entity too large' && message !== 'Payload too large') {
      throw new CliError(`--payload-too-large must be "Request entity too large" or "Payload too large"`, 2);
    }
    readings.payloadTooLargeMessage = message;
  }
  return readings;
}

function integerOption(
  value: string | undefined,
  name: string,
  min: number,
  max: number,
): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < min || number > max) {
    throw new CliError(`--${name} must be an integer from ${min} to ${max}, got "${value}"`, 2);
  }
  return number;
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
export async function runEmulator(ctx: CommandContext, signal: AbortSignal): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: ctx.argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'link-ttl': { type: 'string' },
        'create-status': { type: 'string' },
        'link-field': { type: 'string' },
        'payload-too-large': { type: 'string' },
        // Hidden, for tests and benchmarks.
        'extra-templates': { type: 'string' },
        'synthetic-file-bytes': { type: 'string' },
        seed: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new CliError(`${error instanceof Error ? error.message : String(error)}\n${usage}`, 2);
  }
  if (values.help === true) {
    ctx.stdout.write(usage);
    return 0;
  }
  const text = (name: string): string | undefined => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  const port = integerOption(text('port'), 'port', 0, 65535) ?? defaultEmulatorPort;
  const linkTtlSeconds = integerOption(text('link-ttl'), 'link-ttl', 1, 7 * 24 * 3600);
  const extraTemplates = integerOption(text('extra-templates'), 'extra-templates', 0, 100_000);
  const syntheticFileBytes = integerOption(text('synthetic-file-bytes'), 'synthetic-file-bytes', 0, 2 ** 40);
  const seed = integerOption(text('seed'), 'seed', 0, 2 ** 32 - 1);
  const host = text('host') ?? '127.0.0.1';
  const readings = readingOptions(text);

  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const { apiKey, source } = await resolveApiKey(ctx);
  const emulator = await startEmulator({
    port,
    host,
    apiKey,
    linkTtlMs: linkTtlSeconds === undefined ? undefined : linkTtlSeconds * 1000,
    extraTemplates,
    syntheticFileBytes,
    seed,
    readings,
  });
  try {
    await writeEndpoints(settings.dataDir, { docgen: { baseUrl: emulator.url } });
    ctx.stdout.write(`docrelay emulator ready at ${emulator.url} (API key: ${source})\n`);
    if (!signal.aborted) {
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    }
  } finally {
    await emulator.stop();
    // Forget the endpoint only if it is still ours: another emulator may have started since.
    const current = await readEndpoints(settings.dataDir);
    if (current?.docgen?.baseUrl === emulator.url)
      await writeEndpoints(settings.dataDir, { docgen: undefined });
  }
  ctx.stdout.write('docrelay emulator stopped\n');
  return 0;
}

/** The `emulator` command: runs until SIGINT or SIGTERM, then stops cleanly and exits 0. */
export const run: CommandRun = async (ctx) => {
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    return await runEmulator(ctx, controller.signal);
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
};
