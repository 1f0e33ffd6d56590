/**
 * Compiling the JSONata expressions of the configuration. Kept free of Node and Lambda imports because the
 * schema (imported by the CDK code in lib/) checks every expression's syntax with it.
 */
import jsonata from 'jsonata';

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
  /** The compiled expression, already carrying its evaluation bounds. */
  readonly expression: jsonata.Expression;
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
  // jsonata 2.x enforces these itself: `stack` and `timeout` are checked on every evaluation step
  // (the same hook its test suite's timeboxExpression used), `sequence` caps every sequence it builds.
  const expression = jsonata(source, {
    timeout: bounds.timeoutMs,
    stack: bounds.maxDepth,
    sequence: bounds.maxSequence,
  });
  return { source, path, expression };
}

/** The syntax problem of an expression, or undefined when it compiles. */
export function checkExpressionSyntax(source: string): ExpressionSyntaxProblem | undefined {
  try {
    jsonata(source);
    return undefined;
  } catch (error) {
    return describeSyntaxError(error);
  }
}

/** The literal string an expression consists of (`'gold'`), or undefined when it computes anything. */
export function stringLiteralOf(compiled: CompiledExpression): string | undefined {
  const ast = compiled.expression.ast();
  return ast.type === 'string' && typeof ast.value === 'string' ? ast.value : undefined;
}
