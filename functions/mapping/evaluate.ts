/**
 * Evaluating a compiled expression against a delivery, bounded, and turning its result into plain JSON that
 * cannot carry a polluted prototype or a JSONata sequence's extra fields.
 */
import type { CompiledExpression } from '../config/expressions';
import { BuiltinLimitError } from './builtins';
import type { MappingProblem } from './errors';

/**
 * What an expression sees: the body as root, plus `$headers`, `$query`, `$receivedAt`, `$contentType` and,
 * for a text/plain body, `$body`.
 */
export interface MappingInput {
  /** The parsed body (JSON, form fields, XML as an object, or the text of a text/plain body), or the whole EventBridge event. */
  readonly body: unknown;
  /** The body's media type, lower-case without parameters. @default 'application/json' */
  readonly contentType?: string;
  /** Request headers, names lower-cased. */
  readonly headers: Readonly<Record<string, string>>;
  /** Query string parameters. */
  readonly query: Readonly<Record<string, string>>;
  /** When docrelay received the delivery (ISO 8601). */
  readonly receivedAt: string;
}

/** Deepest nesting of a payload or of a value an expression returns. */
export const MAX_VALUE_DEPTH = 200;

/**
 * Largest value an expression may return, counted as values plus string characters: an expression can build
 * a tree whose subtrees are shared (`[$a, $a]` repeated), tiny in memory but exponential to copy.
 */
export const MAX_RESULT_SIZE = 16 * 1024 * 1024;

/** A JSON value, as it leaves an evaluation. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** The outcome of one evaluation: a JSON value (undefined when the expression matched nothing), or a problem. */
export type EvaluationOutcome =
  | { readonly ok: true; readonly value: JsonValue | undefined }
  | { readonly ok: false; readonly problem: MappingProblem };

/** Prepared bindings of one input, shared by every expression evaluated for it. */
export interface PreparedInput {
  readonly body: unknown;
  readonly bindings: Readonly<Record<string, unknown>>;
}

/** Checks the payload's depth and builds the bindings once; returns a problem for a hostile payload. */
export function prepareInput(
  input: MappingInput,
): { ok: true; prepared: PreparedInput } | { ok: false; problem: MappingProblem } {
  const depth = nestingDepth(input.body, MAX_VALUE_DEPTH + 1);
  if (depth > MAX_VALUE_DEPTH) {
    return {
      ok: false,
      problem: {
        code: 'MAPPING_TOO_DEEP',
        message: `the payload nests deeper than ${MAX_VALUE_DEPTH} levels`,
      },
    };
  }
  return {
    ok: true,
    prepared: {
      body: input.body,
      bindings: {
        headers: safeStringRecord(input.headers, (name) => name.toLowerCase()),
        query: safeStringRecord(input.query, (name) => name),
        receivedAt: input.receivedAt,
        contentType: input.contentType ?? 'application/json',
        ...(typeof input.body === 'string' ? { body: input.body } : {}),
      },
    },
  };
}

/** Evaluates one expression within its time, depth and size bounds. */
export async function evaluateExpression(
  compiled: CompiledExpression,
  prepared: PreparedInput,
  context: { rule?: string; property?: string } = {},
): Promise<EvaluationOutcome> {
  let raw: unknown;
  try {
    raw = await compiled.expression.evaluate(prepared.body, { ...prepared.bindings });
  } catch (error) {
    return { ok: false, problem: { ...context, ...describeEvaluationError(error, compiled) } };
  }
  try {
    return { ok: true, value: toJsonValue(raw, 0, { left: MAX_RESULT_SIZE }) };
  } catch (error) {
    const message = error instanceof ValueShapeError ? error.message : String(error);
    const code = error instanceof ValueShapeError ? error.code : 'MAPPING_EXPRESSION_FAILED';
    return { ok: false, problem: { ...context, code, message: `${compiled.source}: ${message}` } };
  }
}

/**
 * Evaluates expressions in order, in this process, stopping after the first fatal problem (so the result may
 * be shorter than the list). The isolate runs this in its threads.
 */
export async function evaluateAll(
  expressions: readonly CompiledExpression[],
  prepared: PreparedInput,
): Promise<EvaluationOutcome[]> {
  const outcomes: EvaluationOutcome[] = [];
  for (const expression of expressions) {
    const outcome = await evaluateExpression(expression, prepared);
    outcomes.push(outcome);
    if (!outcome.ok && isFatalProblem(outcome.problem)) break;
  }
  return outcomes;
}

/** True for problems that mean "stop now": spending more time on this payload is what an attacker wants. */
export const isFatalProblem = (problem: MappingProblem): boolean =>
  problem.code === 'MAPPING_TIMEOUT' ||
  problem.code === 'MAPPING_TOO_DEEP' ||
  problem.code === 'MAPPING_TOO_LARGE';

function describeEvaluationError(
  error: unknown,
  compiled: CompiledExpression,
): Pick<MappingProblem, 'code' | 'message'> {
  if (error instanceof BuiltinLimitError) {
    return { code: 'MAPPING_TOO_LARGE', message: `${compiled.source}: ${error.message}` };
  }
  if (error instanceof RangeError) {
    // Native limits: "Maximum call stack size exceeded" or "Invalid string length".
    const tooDeep = /call stack/i.test(error.message);
    return {
      code: tooDeep ? 'MAPPING_TOO_DEEP' : 'MAPPING_TOO_LARGE',
      message: `${compiled.source}: ${tooDeep ? 'evaluation nests too deeply' : 'a value grew too large'}`,
    };
  }
  const e = (typeof error === 'object' && error !== null ? error : {}) as Record<string, unknown>;
  const code = typeof e.code === 'string' ? e.code : undefined;
  const text = typeof e.message === 'string' ? e.message : String(error);
  switch (code) {
    case 'D1011':
      return { code: 'MAPPING_TOO_DEEP', message: `${compiled.source}: evaluation exceeded the depth limit` };
    case 'D1012':
      return { code: 'MAPPING_TIMEOUT', message: `${compiled.source}: ${text}` };
    case 'D2014':
    case 'D2015':
      return { code: 'MAPPING_TOO_LARGE', message: `${compiled.source}: ${text}` };
    default: {
      const position = typeof e.position === 'number' ? ` at character ${e.position}` : '';
      return {
        code: 'MAPPING_EXPRESSION_FAILED',
        message: `${compiled.source}: failed${position}: ${text}${code ? ` (${code})` : ''}`,
      };
    }
  }
}

class ValueShapeError extends Error {
  override name = 'ValueShapeError';
  constructor(
    readonly code: MappingProblem['code'],
    message: string,
  ) {
    super(message);
  }
}

/** Defines an own data property: unlike `obj[key] = value`, a key `__proto__` cannot change the prototype. */
export function defineValue(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Copies a result into plain JSON: sequences become arrays, functions are refused, own keys only. `budget`
 * counts values and string characters down from `MAX_RESULT_SIZE`, shared by the whole result.
 */
export function toJsonValue(
  value: unknown,
  depth: number,
  budget: { left: number } = { left: MAX_RESULT_SIZE },
): JsonValue | undefined {
  if (depth > MAX_VALUE_DEPTH) throw new ValueShapeError('MAPPING_TOO_DEEP', 'the result nests too deeply');
  if (value === undefined) return undefined;
  // A string's length is known without flattening it (concatenation builds ropes), so this check is cheap.
  budget.left -= typeof value === 'string' ? value.length + 1 : 1;
  if (budget.left < 0) {
    throw new ValueShapeError(
      'MAPPING_TOO_LARGE',
      `the result is larger than ${MAX_RESULT_SIZE} values and characters`,
    );
  }
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      throw new ValueShapeError('MAPPING_INVALID_VALUE', 'the result is not a finite number');
    return value;
  }
  if (Array.isArray(value)) {
    const out: JsonValue[] = [];
    for (const item of value) {
      const copied = toJsonValue(item, depth + 1, budget);
      if (copied !== undefined) out.push(copied);
    }
    return out;
  }
  if (typeof value === 'function') {
    throw new ValueShapeError('MAPPING_EXPRESSION_FAILED', 'the result is a function, not a value');
  }
  if (typeof value === 'object') {
    const out: { [key: string]: JsonValue } = {};
    for (const key of Object.keys(value)) {
      const copied = toJsonValue((value as Record<string, unknown>)[key], depth + 1, budget);
      if (copied !== undefined) defineValue(out, key, copied);
    }
    return out;
  }
  throw new ValueShapeError('MAPPING_INVALID_VALUE', `the result is a ${typeof value}, not a JSON value`);
}

// Iterative, so that measuring a hostile payload cannot itself overflow the stack.
function nestingDepth(root: unknown, stopAt: number): number {
  let max = 0;
  // Two parallel stacks, no record per value and no array of each object's values: on the ingest's path.
  const values: unknown[] = [root];
  const depths: number[] = [0];
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop() as number;
    if (typeof value !== 'object' || value === null) continue;
    const level = depth + 1;
    if (level > max) max = level;
    if (max >= stopAt) return max;
    if (Array.isArray(value)) {
      for (const child of value) {
        if (typeof child === 'object' && child !== null) {
          values.push(child);
          depths.push(level);
        }
      }
    } else {
      for (const key of Object.keys(value)) {
        const child: unknown = (value as Record<string, unknown>)[key];
        if (typeof child === 'object' && child !== null) {
          values.push(child);
          depths.push(level);
        }
      }
    }
  }
  return max;
}

function safeStringRecord(
  record: Readonly<Record<string, string>>,
  normalizeKey: (key: string) => string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(record)) {
    const value = record[key];
    if (typeof value === 'string') defineValue(out, normalizeKey(key), value);
  }
  return out;
}
