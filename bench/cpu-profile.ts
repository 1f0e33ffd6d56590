/**
 * Reads a V8 `.cpuprofile` (node --cpu-prof) and summarises where the time went: the functions with the most
 * self time, and self time by package (node_modules/<name>, node: internals, docrelay's own folders, native
 * entries such as the garbage collector by name). Idle time is left out.
 */
import { readFile } from 'node:fs/promises';

interface CallFrame {
  readonly functionName: string;
  readonly url: string;
  readonly lineNumber: number;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: CallFrame;
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** One line of a profile summary. */
export interface ProfileEntry {
  readonly name: string;
  readonly selfMs: number;
  readonly percent: number;
}

/** Top functions and packages by self time. */
export interface ProfileSummary {
  readonly totalMs: number;
  readonly functions: readonly ProfileEntry[];
  readonly packages: readonly ProfileEntry[];
}

const isProfile = (value: unknown): value is CpuProfile =>
  typeof value === 'object' &&
  value !== null &&
  'nodes' in value &&
  Array.isArray(value.nodes) &&
  'samples' in value &&
  Array.isArray(value.samples) &&
  'timeDeltas' in value &&
  Array.isArray(value.timeDeltas);

/** Where a script URL belongs: an npm package, a node internal, or a repository folder. */
export function packageOf(url: string): string {
  if (url === '') return '(native / VM)';
  if (url.startsWith('node:')) return 'node: internals';
  const nodeModules = url.lastIndexOf('node_modules/');
  if (nodeModules >= 0) {
    const rest = url.slice(nodeModules + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? url);
  }
  const match = /\/(functions|local|bench|lib|bin)\/([^/]+)/.exec(url);
  return match === null ? url : `${match[1]}/${match[2]}`;
}

const shortUrl = (url: string): string => {
  const nodeModules = url.lastIndexOf('node_modules/');
  if (nodeModules >= 0) return url.slice(nodeModules + 'node_modules/'.length);
  const repo = /\/(functions|local|bench|lib|bin)\/.*/.exec(url);
  return repo === null ? url.replace(/^file:\/\//, '') : repo[0].slice(1);
};

/** Summarises a parsed profile: top `limit` functions and packages by self time. */
export function summarizeProfile(profile: unknown, limit = 15): ProfileSummary {
  if (!isProfile(profile)) throw new Error('not a V8 CPU profile');
  const byId = new Map<number, ProfileNode>(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  let totalUs = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    // Waiting is not work: idle samples are left out of the total.
    if (byId.get(id)?.callFrame.functionName === '(idle)') return;
    totalUs += delta;
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  });
  const functions = new Map<string, number>();
  const packages = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (frame === undefined) continue;
    const name =
      frame.url === ''
        ? `(${frame.functionName || 'anonymous'})`
        : `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
    const pkg = frame.url === '' ? `(${frame.functionName || 'native'})` : packageOf(frame.url);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
  }
  const top = (map: Map<string, number>): ProfileEntry[] =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([name, us]) => ({ name, selfMs: us / 1000, percent: totalUs === 0 ? 0 : (100 * us) / totalUs }));
  return { totalMs: totalUs / 1000, functions: top(functions), packages: top(packages) };
}

/** Reads and summarises a `.cpuprofile` file. */
export async function summarizeProfileFile(path: string, limit = 15): Promise<ProfileSummary> {
  return summarizeProfile(JSON.parse(await readFile(path, 'utf8')), limit);
}
