/**
 * The common `when` rules, evaluated without JSONata: a field compared with a literal (`action = 'opened'`,
 * `$headers.'x-github-event' = 'push'`, `pull_request.merged = true`), and `and`/`or` of such. The ingest
 * evaluates `when` for every delivery, and JSONata's asynchronous evaluator costs more than the rest of the
 * rule step together (issue 17); a walk along a few own properties costs next to nothing.
 *
 * Only what agrees with JSONata by construction is taken: each step of the path is an own property of a plain
 * object, and the value compared is a string, number, boolean or null. Anything else (an array along the
 * path, where JSONata maps over it; an object or array compared, where it compares deeply; an inherited
 * property) answers "ask JSONata", and the whole expression is evaluated by JSONata as before. A property
 * test keeps the two equal (test/unit/mapping/native-when.test.ts).
 */
import type { CompiledExpression } from '../config/expressions';
import type { PreparedInput } from './evaluate';

/** A literal a comparison may name. */
type Literal = string | number | boolean | null;

/** Where a compared value is read: the body, or a binding (`$headers`), then own properties in order. */
interface FieldPath {
  /** `undefined` for the body (the root, also `$`), else the binding's name. */
  readonly binding?: string;
  readonly names: readonly string[];
}

type NativeRule =
  | {
      readonly kind: 'compare';
      readonly equal: boolean;
      readonly field: FieldPath;
      readonly literal: Literal;
    }
  | { readonly kind: 'and' | 'or'; readonly lhs: NativeRule; readonly rhs: NativeRule };

/** A rule's verdict, or ASK_JSONATA when this input needs JSONata's own semantics. */
const ASK_JSONATA = Symbol('ask JSONata');
type Verdict = boolean | typeof ASK_JSONATA;

type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** True when the node has only these keys (any other, such as a predicate or a stage, changes its meaning). */
const onlyKeys = (node: Node, keys: readonly string[]): boolean =>
  Object.keys(node).every((key) => keys.includes(key));

function literalOf(node: Node): { value: Literal } | undefined {
  if (!onlyKeys(node, ['type', 'value', 'position'])) return undefined;
  const { type, value } = node;
  if (type === 'string' && typeof value === 'string') return { value };
  if (type === 'number' && typeof value === 'number' && Number.isFinite(value)) return { value };
  if (type === 'value' && (typeof value === 'boolean' || value === null)) return { value };
  return undefined;
}

/** A step that only names a property (no predicate, stage, focus, index or grouping). */
function stepName(node: unknown, type: 'name' | 'variable'): string | undefined {
  if (!isNode(node) || node.type !== type || typeof node.value !== 'string') return undefined;
  return onlyKeys(node, ['type', 'value', 'position']) ? node.value : undefined;
}

function fieldOf(node: Node): FieldPath | undefined {
  const name = stepName(node, 'name');
  if (name !== undefined) return { names: [name] };
  const variable = stepName(node, 'variable');
  if (variable !== undefined) return variable === '' ? { names: [] } : { binding: variable, names: [] };
  if (node.type !== 'path' || !onlyKeys(node, ['type', 'steps']) || !Array.isArray(node.steps))
    return undefined;
  const [first, ...rest] = node.steps as unknown[];
  const head = stepName(first, 'variable');
  const names: string[] = [];
  for (const step of head === undefined ? node.steps : rest) {
    const stepValue = stepName(step, 'name');
    if (stepValue === undefined) return undefined;
    names.push(stepValue);
  }
  if (names.length === 0) return undefined;
  return head === undefined || head === '' ? { names } : { binding: head, names };
}

function ruleOf(node: unknown): NativeRule | undefined {
  if (!isNode(node)) return undefined;
  if (node.type === 'block' && onlyKeys(node, ['type', 'position', 'expressions'])) {
    const inner = node.expressions;
    return Array.isArray(inner) && inner.length === 1 ? ruleOf(inner[0]) : undefined;
  }
  if (node.type !== 'binary' || !onlyKeys(node, ['type', 'value', 'position', 'lhs', 'rhs']))
    return undefined;
  if (!isNode(node.lhs) || !isNode(node.rhs)) return undefined;
  if (node.value === 'and' || node.value === 'or') {
    const lhs = ruleOf(node.lhs);
    const rhs = ruleOf(node.rhs);
    return lhs === undefined || rhs === undefined ? undefined : { kind: node.value, lhs, rhs };
  }
  if (node.value !== '=' && node.value !== '!=') return undefined;
  const equal = node.value === '=';
  const rightLiteral = literalOf(node.rhs);
  const leftLiteral = literalOf(node.lhs);
  const field = rightLiteral === undefined ? fieldOf(node.rhs) : fieldOf(node.lhs);
  const literal = rightLiteral ?? leftLiteral;
  if (field === undefined || literal === undefined) return undefined;
  return { kind: 'compare', equal, field, literal: literal.value };
}

/** The compared value: undefined when a step is missing, ASK_JSONATA where JSONata would do more than read. */
function read(field: FieldPath, input: PreparedInput): unknown {
  let value: unknown = field.binding === undefined ? input.body : input.bindings[field.binding];
  if (field.binding !== undefined && !Object.hasOwn(input.bindings, field.binding)) return ASK_JSONATA;
  for (const name of field.names) {
    if (value === undefined) return undefined;
    if (!isNode(value)) return ASK_JSONATA;
    if (!Object.hasOwn(value, name)) return name in value ? ASK_JSONATA : undefined;
    value = value[name];
  }
  return value;
}

function evaluate(rule: NativeRule, input: PreparedInput): Verdict {
  if (rule.kind === 'compare') {
    const value = read(rule.field, input);
    if (value === ASK_JSONATA) return ASK_JSONATA;
    // JSONata: a comparison with nothing (no such field) is false, for `=` and `!=` alike.
    if (value === undefined) return false;
    if (typeof value === 'object' && value !== null) return ASK_JSONATA;
    return (value === rule.literal) === rule.equal;
  }
  const lhs = evaluate(rule.lhs, input);
  if (lhs === ASK_JSONATA) return ASK_JSONATA;
  // Both sides are evaluated, as JSONata does; a side that needs JSONata sends the whole rule there.
  const rhs = evaluate(rule.rhs, input);
  if (rhs === ASK_JSONATA) return ASK_JSONATA;
  return rule.kind === 'and' ? lhs && rhs : lhs || rhs;
}

/** Each expression's native rule (null: not one of the shapes taken), made on first use. */
const compiled = new WeakMap<CompiledExpression, NativeRule | null>();

/** The native rule of an expression's source, or undefined when it is not one of the shapes taken. */
export function nativeRule(ast: unknown): NativeRule | undefined {
  return ruleOf(ast);
}

/**
 * The truth of a `when` expression without JSONata, or undefined when JSONata must say (the expression is not
 * a simple comparison, or this input needs JSONata's own semantics).
 */
export function nativeWhen(expression: CompiledExpression, input: PreparedInput): boolean | undefined {
  let rule = compiled.get(expression);
  if (rule === undefined) {
    rule = nativeRule(expression.expression.ast()) ?? null;
    compiled.set(expression, rule);
  }
  if (rule === null) return undefined;
  const verdict = evaluate(rule, input);
  return verdict === ASK_JSONATA ? undefined : verdict;
}
