/**
 * Compiling the JSONata expressions of the configuration. Kept free of Node and Lambda imports because the
 * schema (imported by the CDK code in lib/) checks every expression's syntax with it.
 */
import type jsonata from 'jsonata';
import { registerSafeBuiltins } from '../mapping/builtins';
import { loadJsonata } from './jsonata';

/** Bounds on one evaluation, so a hostile payload cannot hang or exhaust the process. */
export interface ExpressionLimits {
  /** Wall-clock budget of one evaluation, in milliseconds. @default 1000 */
  readonly timeoutMs?: number;
  /** Maximum nesting of JSONata's evaluator (recursion, deeply nested expressions). @default 250 */
  readonly maxDepth?: number;
  /** Maximum length of any sequence the expression builds. @default 1000000 */
  readonly maxSequence?: number;
}

/** Default evaluation bounds (see `ExpressionLimits`). */
export const DEFAULT_EXPRESSION_LIMITS: Required<ExpressionLimits> = {
  timeoutMs: 1000,
  // Ordinary mappings stay well under 60 levels; 250 still allows a few dozen levels of user recursion.
  maxDepth: 250,
  maxSequence: 1_000_000,
};

/** A JSONata expression compiled once at config load, with its source and where it came from. */
export interface CompiledExpression {
  /** The expression as written in the config. */
  readonly source: string;
  /** Config path of the expression, e.g. `integrations[0].documents[1].when`. */
  readonly path: string;
  /** The compiled expression, already carrying its evaluation bounds and the bounded built-ins. */
  readonly expression: jsonata.Expression;
  /** The bounds it was compiled with (the isolate compiles its own copy with the same). */
  readonly limits: Required<ExpressionLimits>;
}

/** A JSONata syntax error, located in the expression text. */
export interface ExpressionSyntaxProblem {
  /** Character position (1-based) where jsonata noticed the error, when it says. */
  readonly position?: number;
  /** jsonata's error code, e.g. `S0203`. */
  readonly code?: string;
  /** Human-readable description with the position. */
  readonly message: string;
}

interface JsonataErrorShape {
  code?: unknown;
  position?: unknown;
  token?: unknown;
  message?: unknown;
}

/** Turns a jsonata compile error into a located, one-line problem. */
export function describeSyntaxError(error: unknown): ExpressionSyntaxProblem {
  const e = (typeof error === 'object' && error !== null ? error : {}) as JsonataErrorShape;
  const code = typeof e.code === 'string' ? e.code : undefined;
  const position = typeof e.position === 'number' ? e.position : undefined;
  const text = typeof e.message === 'string' ? e.message : String(error);
  const where = position === undefined ? '' : ` at character ${position}`;
  return { code, position, message: `invalid JSONata${where}: ${text}${code ? ` (${code})` : ''}` };
}

/** Compiles one expression with the evaluation bounds; throws jsonata's error on a syntax error. */
export function compileExpression(
  source: string,
  path: string,
  limits: ExpressionLimits = {},
): CompiledExpression {
  const bounds = { ...DEFAULT_EXPRESSION_LIMITS, ...limits };
  // jsonata 2.x enforces these itself: `stack` and `timeout` on every evaluation step, `sequence` on every
  // sequence it builds.
  const expression = loadJsonata()(source, {
    timeout: bounds.timeoutMs,
    stack: bounds.maxDepth,
    sequence: bounds.maxSequence,
  });
  // Built-ins run to their end between those checks: the ones that grow with their input are bounded.
  return { source, path, expression: registerSafeBuiltins(expression), limits: bounds };
}

/**
 * `compileExpression` on the first read of `expression`, for a configuration checked before (the bundled one,
 * validated at synth), so each function compiles only what it evaluates. A syntax error, were the text changed
 * since, is thrown at that read and reported by the evaluation.
 */
export function deferExpression(
  source: string,
  path: string,
  limits: ExpressionLimits = {},
): CompiledExpression {
  const bounds = { ...DEFAULT_EXPRESSION_LIMITS, ...limits };
  let compiled: jsonata.Expression | undefined;
  return {
    source,
    path,
    limits: bounds,
    get expression(): jsonata.Expression {
      compiled ??= compileExpression(source, path, bounds).expression;
      return compiled;
    },
  };
}

/**
 * The problem of an expression, or undefined when it compiles and is allowed: a syntax error, or a use of
 * `$eval`, which evaluates text (a payload field, say) as an expression with every binding in reach.
 */
export function checkExpressionSyntax(source: string): ExpressionSyntaxProblem | undefined {
  let ast: unknown;
  try {
    ast = loadJsonata()(source).ast();
  } catch (error) {
    return describeSyntaxError(error);
  }
  const position = findVariable(ast, 'eval');
  if (position === undefined) return undefined;
  const where = position === null ? '' : ` at character ${position}`;
  return {
    position: position ?? undefined,
    message: `$eval is not allowed${where}: it runs text (e.g. from the payload) as an expression`,
  };
}

/** Position of the first reference to `$name` in a jsonata AST (null when unknown), else undefined. */
function findVariable(root: unknown, name: string): number | null | undefined {
  const stack: unknown[] = [root];
  const seen = new Set<object>(); // the AST shares nodes (ancestry slots)
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null || seen.has(node)) continue;
    seen.add(node);
    const record = node as Record<string, unknown>;
    if (record.type === 'variable' && record.value === name) {
      return typeof record.position === 'number' ? record.position : null;
    }
    for (const child of Object.values(record)) if (typeof child === 'object') stack.push(child);
  }
  return undefined;
}

/** The literal string an expression consists of (`'gold'`), or undefined when it computes anything. */
export function stringLiteralOf(compiled: CompiledExpression): string | undefined {
  const ast = compiled.expression.ast();
  return ast.type === 'string' && typeof ast.value === 'string' ? ast.value : undefined;
}
