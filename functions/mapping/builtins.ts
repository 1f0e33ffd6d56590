/**
 * Bounded `$pad`, `$sort` and `$distinct`: their cost grows with their arguments and jsonata checks its
 * limits only between steps. Each checks sizes first and throws `BuiltinLimitError` (`MAPPING_TOO_LARGE`).
 * No Node imports: the config schema, imported by lib/, compiles expressions with this.
 */
import type jsonata from 'jsonata';
import { loadJsonata } from '../config/jsonata';

/** Longest string a built-in may take or make (8 Mi characters; a document field is far smaller). */
export const MAX_STRING_LENGTH = 8 * 1024 * 1024;

/** Most items `$sort` and `$distinct` accept (their useful inputs are line items, not data sets). */
export const MAX_COLLECTION_ITEMS = 10_000;

/** A built-in refused its arguments (or its result) for size; reported as `MAPPING_TOO_LARGE`. */
export class BuiltinLimitError extends Error {
  override name = 'BuiltinLimitError';
  /** Stable code, distinct from jsonata's own. */
  readonly code = 'DOCRELAY_BUILTIN_LIMIT';
}

type Focus = { createSequence?: () => unknown[] };
type Implementation = (this: Focus, ...args: unknown[]) => unknown;

interface Replacement {
  readonly signature: string;
  readonly implementation: Implementation;
}

const tooLarge = (message: string): never => {
  throw new BuiltinLimitError(message);
};

const checkLength = (name: string, what: string, length: number): void => {
  if (length > MAX_STRING_LENGTH)
    tooLarge(`${name}: ${what} of ${length} exceeds ${MAX_STRING_LENGTH} characters`);
};

const codePoints = (text: string): string[] => Array.from(text);

/** `$pad`, as jsonata defines it (code points; a multi-character pad string is cut), width capped first. */
function pad(str: unknown, width: unknown, char: unknown): string | undefined {
  if (typeof str !== 'string') return undefined;
  const w = Math.trunc(width as number);
  if (!(Math.abs(w) <= MAX_STRING_LENGTH))
    tooLarge(`$pad: width ${w} exceeds ${MAX_STRING_LENGTH} characters`);
  const filler = typeof char === 'string' && char.length > 0 ? char : ' ';
  const padLength = Math.abs(w) - codePoints(str).length;
  if (padLength <= 0) return str;
  const units = codePoints(filler);
  const repeated = filler.repeat(Math.ceil(padLength / units.length));
  const padding = units.length === 1 ? repeated : codePoints(repeated).slice(0, padLength).join('');
  return w > 0 ? str + padding : padding + str;
}

const compareNatural = (a: unknown, b: unknown): number =>
  (a as number | string) > (b as number | string)
    ? 1
    : (a as number | string) < (b as number | string)
      ? -1
      : 0;

/**
 * `$sort`: stable, like jsonata's, with the same rule (a comparator returning true puts its first argument
 * after the second), in O(n log n) time and O(n) memory. A bottom-up merge sort, because the comparator is
 * an async JSONata function.
 */
async function sort(arr: unknown, comparator: unknown): Promise<unknown> {
  if (arr === undefined) return undefined;
  const items = arr as unknown[];
  if (items.length <= 1) return items;
  if (items.length > MAX_COLLECTION_ITEMS) {
    tooLarge(`$sort: ${items.length} items exceed the limit of ${MAX_COLLECTION_ITEMS}`);
  }
  if (typeof comparator !== 'function') {
    const numbers = items.every((item) => typeof item === 'number');
    if (!numbers && !items.every((item) => typeof item === 'string')) {
      throw { code: 'D3070', index: 1, stack: new Error().stack };
    }
    return [...items].sort(compareNatural);
  }
  const after = comparator as (a: unknown, b: unknown) => unknown;
  let source = [...items];
  let target: unknown[] = new Array(items.length);
  for (let width = 1; width < source.length; width *= 2) {
    for (let low = 0; low < source.length; low += 2 * width) {
      const middle = Math.min(low + width, source.length);
      const high = Math.min(low + 2 * width, source.length);
      let i = low;
      let j = middle;
      let k = low;
      while (i < middle && j < high) {
        target[k++] = (await after(source[i], source[j])) ? source[j++] : source[i++];
      }
      while (i < middle) target[k++] = source[i++];
      while (j < high) target[k++] = source[j++];
    }
    [source, target] = [target, source];
  }
  return source;
}

/** `$distinct` with jsonata's deep equality, in linear time: values are keyed by a canonical JSON text. */
function distinct(this: Focus, arr: unknown): unknown {
  if (!Array.isArray(arr) || arr.length <= 1) return arr;
  if (arr.length > MAX_COLLECTION_ITEMS) {
    tooLarge(`$distinct: ${arr.length} items exceed the limit of ${MAX_COLLECTION_ITEMS}`);
  }
  const isSequence = (arr as { sequence?: unknown }).sequence === true;
  const results = isSequence && this.createSequence !== undefined ? this.createSequence() : [];
  const seen = new Set<unknown>();
  const budget = { left: MAX_STRING_LENGTH };
  for (const value of arr) {
    const key = typeof value === 'object' && value !== null ? canonicalKey(value, budget) : value;
    if (seen.has(key)) continue;
    seen.add(key);
    results.push(value);
  }
  return results;
}

/** Canonical text of an object or array (sorted keys), within a character budget shared by the whole call. */
function canonicalKey(value: unknown, budget: { left: number }): string {
  const parts: string[] = [];
  const visit = (node: unknown): void => {
    if (--budget.left < 0) tooLarge(`$distinct: the values exceed ${MAX_STRING_LENGTH} characters`);
    if (Array.isArray(node)) {
      parts.push('[');
      for (const item of node) {
        visit(item);
        parts.push(',');
      }
      parts.push(']');
    } else if (typeof node === 'object' && node !== null) {
      parts.push('{');
      for (const key of Object.keys(node).sort()) {
        parts.push(JSON.stringify(key), ':');
        visit((node as Record<string, unknown>)[key]);
        parts.push(',');
      }
      parts.push('}');
    } else {
      const text = typeof node === 'function' ? '"<function>"' : (JSON.stringify(node) ?? 'undefined');
      budget.left -= text.length;
      parts.push(text);
    }
  };
  visit(value);
  return parts.join('');
}

/** Characters `JSON.stringify` would write for a value, counted until `limit` is passed (shared subtrees count each time). */
export function exceedsSerializedLength(value: unknown, limit: number): boolean {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') total += node.length + 2;
    else if (Array.isArray(node)) {
      total += 2 + node.length;
      for (const item of node) stack.push(item);
    } else if (typeof node === 'object' && node !== null) {
      for (const key of Object.keys(node)) {
        total += key.length + 4;
        stack.push((node as Record<string, unknown>)[key]);
      }
      total += 2;
    } else total += 8;
    if (total > limit) return true;
  }
  return false;
}

/** Upper bound of `$replace`'s result: each match adds the replacement, each `$n` in it at most the input. */
function replaceBound(str: string, pattern: unknown, replacement: unknown, limit: unknown): number {
  if (typeof replacement !== 'string') return str.length; // a function's results are checked as they come
  const maxMatches = Math.min(
    typeof limit === 'number' ? Math.max(0, limit) : Number.POSITIVE_INFINITY,
    typeof pattern === 'string' && pattern.length > 0
      ? Math.floor(str.length / pattern.length)
      : str.length + 1,
  );
  const references = replacement.split('$').length - 1;
  return str.length + maxMatches * (replacement.length + references * str.length);
}

/** Reads the original built-ins once, from a plain jsonata instance, so wrappers can delegate to them. */
const ORIGINAL_NAMES = ['string', 'join', 'replace', 'split', 'formatNumber', 'match'] as const;
type OriginalName = (typeof ORIGINAL_NAMES)[number];
type JsonataFunction = { implementation: Implementation };
let originals: Map<OriginalName, JsonataFunction> | undefined;
let loadingOriginals: Promise<Map<OriginalName, JsonataFunction>> | undefined;

/** The originals, read on the first call of a wrapped built-in (not at load: JSONata may never be needed). */
function readOriginals(): Promise<Map<OriginalName, JsonataFunction>> {
  const jsonata = loadJsonata();
  loadingOriginals ??= Promise.all(
    ORIGINAL_NAMES.map(
      async (name) => [name, (await jsonata(`$${name}`).evaluate({})) as JsonataFunction] as const,
    ),
  ).then((entries) => {
    originals = new Map(entries);
    return originals;
  });
  return loadingOriginals;
}

async function callOriginal(name: OriginalName, focus: Focus, args: unknown[]): Promise<unknown> {
  const table = originals ?? (await readOriginals());
  const result = await (table.get(name) as JsonataFunction).implementation.apply(focus, args);
  if (typeof result === 'string') checkLength(`$${name}`, 'a result', result.length);
  if (Array.isArray(result) && result.length > MAX_STRING_LENGTH) {
    tooLarge(`$${name}: ${result.length} items exceed the limit`);
  }
  return result;
}

/** Strings a wrapped built-in takes are capped too: a huge one can only come from concatenation in the expression. */
function wrap(name: OriginalName, signature: string, precheck?: (...args: unknown[]) => void): Replacement {
  return {
    signature,
    implementation(this: Focus, ...args: unknown[]) {
      for (const arg of args) if (typeof arg === 'string') checkLength(`$${name}`, 'an argument', arg.length);
      precheck?.(...args);
      return callOriginal(name, this, args);
    },
  };
}

/** The replacements, by name, with jsonata's own signatures (so argument checks and context binding stay). */
export const SAFE_BUILTINS: Readonly<Record<string, Replacement>> = {
  pad: { signature: '<s-ns?:s>', implementation: pad },
  sort: { signature: '<af?:a>', implementation: sort },
  distinct: { signature: '<x:x>', implementation: distinct },
  string: wrap('string', '<x-b?:s>', (value) => {
    if (exceedsSerializedLength(value, MAX_STRING_LENGTH)) {
      tooLarge(`$string: the value's text exceeds ${MAX_STRING_LENGTH} characters`);
    }
  }),
  join: wrap('join', '<a<s>s?:s>', (strings, separator) => {
    const list = Array.isArray(strings) ? (strings as unknown[]) : [strings];
    let total = typeof separator === 'string' ? separator.length * Math.max(0, list.length - 1) : 0;
    for (const item of list) total += typeof item === 'string' ? item.length : 0;
    checkLength('$join', 'a result', total);
  }),
  replace: wrap('replace', '<s-(sf)(sf)n?:s>', (str, pattern, replacement, limit) => {
    if (typeof str === 'string')
      checkLength('$replace', 'a result', replaceBound(str, pattern, replacement, limit));
  }),
  split: wrap('split', '<s-(sf)n?:a<s>>'),
  formatNumber: wrap('formatNumber', '<n-so?:s>'),
  match: wrap('match', '<s-f<s:o>n?:a<o>>'),
  eval: {
    signature: '<sx?:x>',
    implementation() {
      // Refused at config check too; this is the runtime's own guard (it would run payload text as code).
      throw {
        code: 'DOCRELAY_EVAL_REFUSED',
        message: '$eval is not available: it runs text as an expression',
      };
    },
  },
};

/** Registers the bounded built-ins on a compiled expression (they shadow jsonata's in its environment). */
export function registerSafeBuiltins(expression: jsonata.Expression): jsonata.Expression {
  for (const [name, { implementation, signature }] of Object.entries(SAFE_BUILTINS)) {
    expression.registerFunction(name, implementation as (...args: unknown[]) => unknown, signature);
  }
  return expression;
}
