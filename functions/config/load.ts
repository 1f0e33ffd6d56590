/**
 * Loading the YAML configuration: parse, validate against the one schema, compile every expression.
 * Every problem is collected and reported at once, each with its config path and file position.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { isMap, isScalar, LineCounter, parseDocument, type Node as YamlNode } from 'yaml';
import type { z } from 'zod';
import { compileConfig, formatPath, type LoadedConfig } from './compile';
import { ConfigError, ConfigFileError, type ConfigProblem } from './errors';
import type { ExpressionLimits } from './expressions';
import { DocrelayConfigSchema, describeValueType } from './schema';
import { didYouMean } from './suggest';

type PathKey = string | number;

/** Options of `parseConfig`. */
export interface ParseConfigOptions {
  /** Evaluation bounds of the compiled expressions (tests lower them). */
  readonly limits?: ExpressionLimits;
}

/** Parses and validates configuration text; throws `ConfigError` listing every problem. */
export function parseConfig(
  text: string,
  source = 'docrelay.yaml',
  options: ParseConfigOptions = {},
): LoadedConfig {
  const lineCounter = new LineCounter();
  // uniqueKeys: a key given twice is almost always a mistake, and YAML would silently keep the last one.
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    throw new ConfigError(
      source,
      doc.errors.map((error) => {
        const pos = error.linePos?.[0] ?? lineCounter.linePos(error.pos[0]);
        return {
          path: '',
          message: `YAML ${error.message.split('\n')[0]}`,
          line: pos?.line,
          column: pos?.col,
        };
      }),
    );
  }
  // maxAliasCount bounds alias expansion ("billion laughs").
  const data: unknown = doc.toJS({ maxAliasCount: 100 });
  if (data === null || data === undefined) {
    throw new ConfigError(source, [{ path: '', message: 'the file is empty; see config/docrelay.yaml' }]);
  }
  const result = DocrelayConfigSchema.safeParse(data, { error: defaultMessage });
  if (!result.success) {
    const locate = (path: readonly PathKey[], keyOf?: string) =>
      position(doc.contents, lineCounter, path, keyOf);
    const problems = result.error.issues.flatMap((issue) => toProblems(issue, locate));
    throw new ConfigError(source, sortByPosition(problems));
  }
  return compileConfig(result.data, source, options.limits);
}

/** Reads, parses and validates a configuration file. */
export async function loadConfigFile(path: string, options: ParseConfigOptions = {}): Promise<LoadedConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigFileError(path, error);
  }
  return parseConfig(text, path, options);
}

/** `loadConfigFile` for synchronous callers (the CDK app at synth time). */
export function loadConfigFileSync(path: string, options: ParseConfigOptions = {}): LoadedConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigFileError(path, error);
  }
  return parseConfig(text, path, options);
}

// Zod's generic messages ("Invalid input: expected string, received undefined") become short, plain ones.
function defaultMessage(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined
        ? 'is required'
        : `expected ${issue.expected === 'object' ? 'a mapping' : issue.expected === 'array' ? 'a list' : issue.expected}, got ${describeValueType(issue.input)}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'too_small':
      return issue.origin === 'array'
        ? `needs at least ${issue.minimum} item(s)`
        : issue.origin === 'string'
          ? issue.minimum === 1
            ? 'must not be empty'
            : `must be at least ${issue.minimum} characters`
          : `must be at least ${issue.minimum}`;
    case 'too_big':
      return issue.origin === 'array'
        ? `takes at most ${issue.maximum} item(s)`
        : issue.origin === 'string'
          ? `must be at most ${issue.maximum} characters`
          : `must be at most ${issue.maximum}`;
    default:
      return undefined;
  }
}

function toProblems(
  issue: z.core.$ZodIssue,
  locate: (path: readonly PathKey[], keyOf?: string) => { line?: number; column?: number },
): ConfigProblem[] {
  const path = issue.path.filter((key): key is PathKey => typeof key !== 'symbol');
  if (issue.code === 'unrecognized_keys') {
    // One problem per unknown key, located at the key itself, with a suggestion from the known keys.
    const known = knownKeysAt(path);
    return issue.keys.map((key) => ({
      path: formatPath([...path, key]),
      message: `unknown key${didYouMean(key, known)}; expected one of: ${known.join(', ')}`,
      ...locate(path, key),
    }));
  }
  if (issue.code === 'invalid_key') {
    // Zod says only "Invalid key in record"; the refinement's own message says why.
    const message = issue.issues.map((inner) => inner.message).join('; ') || issue.message;
    return [{ path: formatPath(path), message, ...locate(path) }];
  }
  return [{ path: formatPath(path), message: issue.message, ...locate(path) }];
}

// --- positions -------------------------------------------------------------------------------------------

interface YamlPairLike {
  key: unknown;
  value: unknown;
}

function position(
  root: unknown,
  lineCounter: LineCounter,
  path: readonly PathKey[],
  keyOf?: string,
): { line?: number; column?: number } {
  // Walk down as far as the path exists; a missing key is reported at its parent mapping.
  let node: unknown = root;
  let located: unknown = root;
  for (const key of path) {
    const child = childOf(node, key);
    if (child === undefined) break;
    node = child.value;
    // A scalar is reported at the value itself (an invalid expression), a mapping or list at its key.
    located = isScalar(child.value) || child.key === undefined ? child.value : child.key;
  }
  if (keyOf !== undefined) {
    const pair = childOf(node, keyOf);
    if (pair?.key !== undefined) located = pair.key;
  }
  const range = (located as Partial<YamlNode> | undefined)?.range;
  if (!range) return {};
  const { line, col } = lineCounter.linePos(range[0]);
  return { line, column: col };
}

function childOf(node: unknown, key: PathKey): { key?: unknown; value: unknown } | undefined {
  if (isMap(node)) {
    const pair = (node.items as YamlPairLike[]).find((p) => (isScalar(p.key) ? p.key.value : p.key) === key);
    return pair === undefined ? undefined : { key: pair.key, value: pair.value };
  }
  if (typeof key === 'number' && typeof node === 'object' && node !== null && 'items' in node) {
    const items = (node as { items: unknown[] }).items;
    return key < items.length ? { value: items[key] } : undefined;
  }
  return undefined;
}

function sortByPosition(problems: ConfigProblem[]): ConfigProblem[] {
  return problems
    .map((problem, index) => ({ problem, index }))
    .sort((a, b) => (a.problem.line ?? 1e9) - (b.problem.line ?? 1e9) || a.index - b.index)
    .map(({ problem }) => problem);
}

// --- known keys, for "did you mean" ----------------------------------------------------------------------

interface ZodDefLike {
  type?: string;
  shape?: Record<string, { _zod: { def: ZodDefLike } }>;
  element?: { _zod: { def: ZodDefLike } };
  innerType?: { _zod: { def: ZodDefLike } };
  in?: { _zod: { def: ZodDefLike } };
  valueType?: { _zod: { def: ZodDefLike } };
}

function knownKeysAt(path: readonly PathKey[]): string[] {
  let def: ZodDefLike | undefined = unwrap(DocrelayConfigSchema._zod.def as ZodDefLike);
  for (const key of path) {
    if (def === undefined) return [];
    if (def.type === 'object') def = def.shape?.[String(key)]?._zod.def;
    else if (def.type === 'array') def = def.element?._zod.def;
    else if (def.type === 'record') def = def.valueType?._zod.def;
    else return [];
    def = def === undefined ? undefined : unwrap(def);
  }
  return def?.type === 'object' && def.shape ? Object.keys(def.shape).filter((k) => k !== '$schema') : [];
}

function unwrap(def: ZodDefLike): ZodDefLike {
  let current = def;
  for (let i = 0; i < 10; i++) {
    const inner = current.innerType ?? (current.type === 'pipe' ? current.in : undefined);
    if (inner === undefined) return current;
    current = inner._zod.def;
  }
  return current;
}
