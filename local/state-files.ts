/**
 * Files the local stack keeps in its data directory so that other processes (the CLI, tests, a second
 * terminal) find it: `endpoints.json` says where each emulator of a running stack listens. It never holds a
 * secret value.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Credentials the local AWS emulators accept; they are not secrets. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;
/** Region of the local stack. */
export const LOCAL_REGION = 'us-east-1';

/** Where the parts of a running local stack (or a standalone emulator) listen. */
export interface LocalEndpoints {
  /** Base URL of the local HTTP API (webhooks, jobs). */
  api?: string;
  /** The Document Generation Service emulator. */
  docgen?: { baseUrl: string };
  /** Local AWS emulators and the resources created in them. */
  aws?: {
    region: string;
    s3: string;
    sqs: string;
    dynamodb: string;
    bucket: string;
    queueUrl: string;
    dlqUrl: string;
    table: string;
  };
  /** Process id of the stack that wrote the file. */
  pid?: number;
  /**
   * A standalone emulator (`docrelay emulator`), kept apart from the stack's `docgen` so that starting or
   * stopping one beside a running stack never changes the stack's entries.
   */
  emulator?: { baseUrl: string; pid: number };
}

/** True when a process with that id exists (a stale endpoints file outlives its stack). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when the stack that wrote the endpoints still runs (files without a pid are taken as running). */
export function stackRunning(endpoints: LocalEndpoints): boolean {
  return endpoints.aws !== undefined && (endpoints.pid === undefined || processAlive(endpoints.pid));
}

/**
 * The Document Generation Service the CLI should use locally: the running stack's, else a running standalone
 * emulator's, else a `docgen` entry written without a stack (older files); undefined when none runs.
 */
export function runningServiceUrl(endpoints: LocalEndpoints | undefined): string | undefined {
  if (endpoints === undefined) return undefined;
  if (stackRunning(endpoints) && endpoints.docgen?.baseUrl) return endpoints.docgen.baseUrl;
  if (endpoints.emulator !== undefined && processAlive(endpoints.emulator.pid))
    return endpoints.emulator.baseUrl;
  if (endpoints.aws === undefined && endpoints.docgen?.baseUrl) return endpoints.docgen.baseUrl;
  return undefined;
}

const endpointsFile = (dataDir: string): string => join(dataDir, 'endpoints.json');

/** Reads the endpoints of a running local stack, or undefined when none wrote them. */
export async function readEndpoints(dataDir: string): Promise<LocalEndpoints | undefined> {
  try {
    return JSON.parse(await readFile(endpointsFile(dataDir), 'utf8')) as LocalEndpoints;
  } catch {
    return undefined;
  }
}

/** Merges `update` into the endpoints file, atomically (write to a temporary file, then rename). */
export async function writeEndpoints(dataDir: string, update: LocalEndpoints): Promise<void> {
  const current = (await readEndpoints(dataDir)) ?? {};
  await writeJsonAtomic(endpointsFile(dataDir), { ...current, ...update });
}

/** Writes JSON to `file` through a temporary file and a rename, so readers never see half a file. */
export async function writeJsonAtomic(file: string, value: unknown, mode = 0o644): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode });
  await rename(tmp, file);
}

/**
 * Makes sure the local secrets file exists and holds every named secret, creating development values for
 * the missing ones (random, so no two clones share them). Returns the names it created.
 */
export async function ensureDevSecrets(file: string, names: readonly string[]): Promise<string[]> {
  let values: Record<string, string> = {};
  try {
    values = JSON.parse(await readFile(file, 'utf8')) as Record<string, string>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const created = names.filter((name) => typeof values[name] !== 'string' || values[name] === '');
  if (created.length === 0) return [];
  for (const name of created) values[name] = devSecretValue(name);
  await writeJsonAtomic(file, values, 0o600);
  return created;
}

/** A development value for a secret; Standard Webhooks secrets take their `whsec_` form. */
function devSecretValue(name: string): string {
  const bytes = randomBytes(24);
  return /standard|svix|whsec/i.test(name)
    ? `whsec_${bytes.toString('base64')}`
    : `dev_${bytes.toString('hex')}`;
}

/** Another local stack already uses the data directory (its databases allow one process at a time). */
export class DataDirInUseError extends Error {
  constructor(dataDir: string, pid: number) {
    super(
      `another docrelay local stack (pid ${pid}) is using ${dataDir}: stop it, or set DOCRELAY_DATA_DIR to another directory`,
    );
    this.name = 'DataDirInUseError';
  }
}

/**
 * Takes the data directory for this process (`<dataDir>/stack.pid`, created exclusively), or throws
 * DataDirInUseError naming the live process that holds it; a lock left by a process that died is taken over.
 * Resolves to the release function.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  await mkdir(dataDir, { recursive: true });
  const file = join(dataDir, 'stack.pid');
  // Bounded: one take-over of a stale lock, then give up.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      await writeFile(file, `${process.pid}\n`, { flag: 'wx' });
      return async () => {
        await unlink(file).catch(() => undefined);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const pid = Number.parseInt(await readFile(file, 'utf8').catch(() => ''), 10);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid))
      throw new DataDirInUseError(dataDir, pid);
    await unlink(file).catch(() => undefined);
  }
  throw new Error(`cannot take the lock ${file}`);
}
