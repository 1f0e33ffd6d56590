/**
 * `npm run lock:repair`: this project's npm registry serves only some platforms' builds of native packages,
 * so `npm install` writes a lock file that `npm ci` refuses. This adds the missing optional entries with
 * their platform (`os`, `cpu`, `libc`), so `npm ci` skips them elsewhere; run it after any `npm install`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

interface LockEntry {
  version?: string;
  dev?: boolean;
  optional?: boolean;
  license?: string;
  optionalDependencies?: Record<string, string>;
  os?: string[];
  cpu?: string[];
  libc?: string[];
}

const OS = [
  'android',
  'darwin',
  'freebsd',
  'linux',
  'openbsd',
  'sunos',
  'win32',
  'aix',
  'netbsd',
  'openharmony',
];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el'];

/** The platform a binary package's name says it is for, e.g. `cli-linux-x64-musl` → linux, x64, musl. */
export function platformOf(name: string): Pick<LockEntry, 'os' | 'cpu' | 'libc'> | undefined {
  const parts = (name.split('/').pop() ?? '').split('-');
  const os = parts.find((part) => OS.includes(part));
  const cpu = parts.find((part) => CPU.includes(part)) ?? (parts.includes('arm') ? 'arm' : undefined);
  if (os === undefined || cpu === undefined) return undefined;
  const libc = parts.some((part) => part.startsWith('musl'))
    ? ['musl']
    : os === 'linux' && parts.some((part) => part.startsWith('gnu'))
      ? ['glibc']
      : undefined;
  return { os: [os], cpu: [cpu], ...(libc === undefined ? {} : { libc }) };
}

function main(): void {
  const file = join(process.cwd(), 'package-lock.json');
  const lock = JSON.parse(readFileSync(file, 'utf8')) as { packages: Record<string, LockEntry> };
  let added = 0;
  for (const entry of Object.values(lock.packages)) {
    for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
      const platform = platformOf(name);
      const key = `node_modules/${name}`;
      if (platform === undefined || lock.packages[key] !== undefined) continue;
      lock.packages[key] = {
        version,
        ...(entry.dev ? { dev: true } : {}),
        optional: true,
        ...platform,
      };
      added += 1;
    }
  }
  const sorted: Record<string, LockEntry> = {};
  for (const key of Object.keys(lock.packages).sort((a, b) =>
    a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1,
  )) {
    sorted[key] = lock.packages[key] as LockEntry;
  }
  lock.packages = sorted;
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  process.stdout.write(`package-lock.json: ${added} optional platform entries added\n`);
}

if (require.main === module) main();
