/**
 * A package-lock.json for a fresh app that installs the packed docrelay tarball, derived from this repository's
 * lock file, so `npm ci --offline` installs it from the npm cache alone (`npm install` would need the registry's
 * package documents, which `npm ci` never caches). The app's tree is the one npm resolves for docrelay here:
 * each package the tarball's dependencies (and the app's own) reach, at the place the repository's lock puts it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** One entry of a lock file's `packages`. */
interface LockEntry {
  readonly version?: string;
  readonly dependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  readonly [key: string]: unknown;
}

/** The package.json fields of the packed docrelay the lock needs. */
export interface PackedManifest {
  readonly name: string;
  readonly version: string;
  readonly dependencies: Record<string, string>;
  readonly peerDependencies: Record<string, string>;
}

/** The install location of `name` as Node resolves it from the package at `from` ('' is the root). */
function resolveIn(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  for (let base = from; ; ) {
    const candidate = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
    if (packages[candidate] !== undefined) return candidate;
    if (base === '') return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

/**
 * The lock of an app whose package.json depends on `appDependencies` (docrelay as `file:<tarball>` among them),
 * taking every other package from `repositoryLock` (a package-lock.json v3).
 */
export function offlineAppLock(options: {
  readonly appName: string;
  readonly appDependencies: Record<string, string>;
  readonly tarballPath: string;
  readonly tarballSpec: string;
  readonly packed: PackedManifest;
  readonly repositoryLock: string;
}): object {
  const lock = JSON.parse(readFileSync(options.repositoryLock, 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const source = lock.packages;
  const { packed } = options;
  const integrity = `sha512-${createHash('sha512').update(readFileSync(options.tarballPath)).digest('base64')}`;
  const packages: Record<string, LockEntry> = {
    '': { name: options.appName, dependencies: options.appDependencies },
    [`node_modules/${packed.name}`]: {
      version: packed.version,
      resolved: options.tarballSpec,
      integrity,
      dependencies: packed.dependencies,
      peerDependencies: packed.peerDependencies,
    },
  };
  // docrelay sits at node_modules/docrelay, where the repository's root is: its dependencies resolve the same.
  const pending: Array<{ from: string; name: string; optional: boolean }> = [];
  const request = (from: string, entry: LockEntry): void => {
    const optionalPeers = entry.peerDependenciesMeta ?? {};
    for (const name of Object.keys(entry.dependencies ?? {})) pending.push({ from, name, optional: false });
    for (const name of Object.keys(entry.optionalDependencies ?? {}))
      pending.push({ from, name, optional: true });
    for (const name of Object.keys(entry.peerDependencies ?? {})) {
      pending.push({ from, name, optional: optionalPeers[name]?.optional === true });
    }
  };
  for (const name of Object.keys(options.appDependencies)) {
    if (name !== packed.name) pending.push({ from: '', name, optional: false });
  }
  request('', { dependencies: packed.dependencies, peerDependencies: packed.peerDependencies });
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const location = resolveIn(source, next.from, next.name);
    if (location === undefined) {
      if (next.optional) continue;
      throw new Error(
        `${next.name} (needed by ${next.from || 'the app'}) is not in ${options.repositoryLock}`,
      );
    }
    if (packages[location] !== undefined) continue;
    const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = source[location] as LockEntry;
    packages[location] = entry;
    request(location, entry);
  }
  return { name: options.appName, lockfileVersion: 3, requires: true, packages };
}
