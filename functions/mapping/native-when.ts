/**
 * The common `when` rules (a field compared with a literal, `and`/`or` of such) without JSONata, the
 * costliest part of the ingest's rule step. Only what agrees with JSONata by construction is taken, anything
 * else asks JSONata; a property test keeps the two equal. See docs/decisions.md, "Mapping".
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

/** A `when` rule JSONata need not evaluate. */
export type NativeRule =
  | {
      readonly kind: 'compare';
      readonly equal: boolean;
      readonly field: FieldPath;
      readonly literal: Literal;
    }
  | { readonly kind: 'and' | 'or'; readonly lhs: NativeRule; readonly rhs: NativeRule };

type Token =
  | { readonly type: 'name' | 'variable' | 'string'; readonly value: string }
  | { readonly type: 'number'; readonly value: number }
  | { readonly type: 'op'; readonly value: '.' | '=' | '!=' | '(' | ')' | 'and' | 'or' }
  | { readonly type: 'value'; readonly value: boolean | null };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;
const NUMBER = /^(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/;
const VALUES: Readonly<Record<string, boolean | null>> = { true: true, false: false, null: null };

/** The tokens of the text, or undefined at the first character outside the plain subset. */
function tokenize(text: string): Token[] | undefined {
  const tokens: Token[] = [];
  let rest = text;
  for (;;) {
    rest = rest.trimStart();
    if (rest === '') return tokens;
    const char = rest[0] as string;
    if (char === '(' || char === ')' || char === '.' || char === '=') {
      tokens.push({ type: 'op', value: char });
      rest = rest.slice(1);
    } else if (rest.startsWith('!=')) {
      tokens.push({ type: 'op', value: '!=' });
      rest = rest.slice(2);
    } else if (char === "'" || char === '"' || char === '`') {
      const end = rest.indexOf(char, 1);
      const value = rest.slice(1, end);
      // No escapes (JSONata would read them) and no line breaks: left to JSONata.
      if (end < 0 || value.includes('\\') || /[\r\n]/.test(value)) return undefined;
      tokens.push({ type: char === '`' ? 'name' : 'string', value });
      rest = rest.slice(end + 1);
    } else if (char === '$') {
      const name = NAME.exec(rest.slice(1))?.[0] ?? '';
      tokens.push({ type: 'variable', value: name });
      rest = rest.slice(1 + name.length);
    } else {
      const number = NUMBER.exec(rest)?.[0];
      const name = NAME.exec(rest)?.[0];
      if (number !== undefined && name === undefined) {
        tokens.push({ type: 'number', value: Number(number) });
        rest = rest.slice(number.length);
      } else if (name !== undefined) {
        if (name === 'and' || name === 'or') tokens.push({ type: 'op', value: name });
        else if (Object.hasOwn(VALUES, name))
          tokens.push({ type: 'value', value: VALUES[name] as boolean | null });
        else if (name === 'in') return undefined;
        else tokens.push({ type: 'name', value: name });
        rest = rest.slice(name.length);
      } else return undefined;
      // A name or number runs into the next token only through an operator or a space (`1a`, `a$`: JSONata's).
      if (rest !== '' && !/^[\s().=!]/.test(rest)) return undefined;
    }
  }
}

/** A recursive-descent reading of the tokens: `or` of `and` of comparisons, in parentheses or not. */
class Reader {
  private at = 0;
  constructor(private readonly tokens: readonly Token[]) {}

  /** The rule when the tokens are exactly one, else undefined. */
  rule(): NativeRule | undefined {
    const rule = this.or();
    return rule !== undefined && this.at === this.tokens.length ? rule : undefined;
  }

  /** The field when the tokens are exactly one field, else undefined. */
  field(): FieldPath | undefined {
    const operand = this.operand();
    return operand !== undefined && 'field' in operand && this.at === this.tokens.length
      ? operand.field
      : undefined;
  }

  private peekOp(value: string): boolean {
    const token = this.tokens[this.at];
    return token?.type === 'op' && token.value === value;
  }

  private or(): NativeRule | undefined {
    return this.chain('or', () => this.and());
  }

  private and(): NativeRule | undefined {
    return this.chain('and', () => this.primary());
  }

  /** Operands joined by one operator, left to right (`next` reads the tighter-binding level). */
  private chain(op: 'and' | 'or', next: () => NativeRule | undefined): NativeRule | undefined {
    let lhs = next();
    while (lhs !== undefined && this.peekOp(op)) {
      this.at += 1;
      const rhs = next();
      lhs = rhs === undefined ? undefined : { kind: op, lhs, rhs };
    }
    return lhs;
  }

  private primary(): NativeRule | undefined {
    if (this.peekOp('(')) {
      this.at += 1;
      const inner = this.or();
      if (inner === undefined || !this.peekOp(')')) return undefined;
      this.at += 1;
      return inner;
    }
    const left = this.operand();
    const op = this.tokens[this.at];
    if (left === undefined || op?.type !== 'op' || (op.value !== '=' && op.value !== '!=')) return undefined;
    this.at += 1;
    const right = this.operand();
    if (right === undefined) return undefined;
    const equal = op.value === '=';
    if ('field' in left && 'literal' in right)
      return { kind: 'compare', equal, field: left.field, literal: right.literal };
    if ('literal' in left && 'field' in right)
      return { kind: 'compare', equal, field: right.field, literal: left.literal };
    return undefined;
  }

  private operand(): { field: FieldPath } | { literal: Literal } | undefined {
    const head = this.tokens[this.at];
    if (head === undefined) return undefined;
    this.at += 1;
    if (head.type === 'string' || head.type === 'number' || head.type === 'value')
      return { literal: head.value };
    if (head.type !== 'name' && head.type !== 'variable') return undefined;
    const names: string[] = head.type === 'name' ? [head.value] : [];
    while (this.peekOp('.')) {
      this.at += 1;
      const step = this.tokens[this.at];
      // After a dot, a quoted string is a name too (`$headers.'x-github-event'`).
      if (step?.type !== 'name' && step?.type !== 'string') return undefined;
      names.push(step.value);
      this.at += 1;
    }
    if (head.type === 'name') return { field: { names } };
    // `$` alone is the body; a bare `$name` is compared whole; `$.a` reads the body.
    if (head.value === '') return names.length === 0 ? undefined : { field: { names } };
    return { field: { binding: head.value, names } };
  }
}

/** The native rule of a `when` expression's text, or undefined when it is not one of the shapes taken. */
export function nativeRule(source: string): NativeRule | undefined {
  const tokens = tokenize(source);
  return tokens === undefined ? undefined : new Reader(tokens).rule();
}

/** The field an expression's text is, when it is nothing but a field (`$headers.'x-request-id'`, `data.id`). */
function nativeField(source: string): FieldPath | undefined {
  const tokens = tokenize(source);
  return tokens === undefined ? undefined : new Reader(tokens).field();
}

/** A rule's verdict, or ASK_JSONATA when this input needs JSONata's own semantics. */
const ASK_JSONATA = Symbol('ask JSONata');
type Verdict = boolean | typeof ASK_JSONATA;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The compared value: undefined when a step is missing, ASK_JSONATA where JSONata would do more than read. */
function read(field: FieldPath, input: PreparedInput): unknown {
  if (field.binding !== undefined && !Object.hasOwn(input.bindings, field.binding)) return ASK_JSONATA;
  let value: unknown = field.binding === undefined ? input.body : input.bindings[field.binding];
  for (const name of field.names) {
    if (value === undefined) return undefined;
    if (!isRecord(value)) return ASK_JSONATA;
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
  // Both sides are evaluated; a side that needs JSONata sends the whole rule there.
  const rhs = evaluate(rule.rhs, input);
  if (rhs === ASK_JSONATA) return ASK_JSONATA;
  return rule.kind === 'and' ? lhs && rhs : lhs || rhs;
}

/** `parse` of an expression's source, read once per expression (null: the shape is not one taken). */
function readOnce<T>(parse: (source: string) => T | undefined): (expression: CompiledExpression) => T | null {
  const read = new WeakMap<CompiledExpression, T | null>();
  return (expression) => {
    let parsed = read.get(expression);
    if (parsed === undefined) {
      parsed = parse(expression.source) ?? null;
      read.set(expression, parsed);
    }
    return parsed;
  };
}

const fieldOf = readOnce(nativeField);
const ruleOf = readOnce(nativeRule);

/**
 * The value of a plain-field expression (such as a configured `deliveryId`), read without JSONata: a scalar
 * or null, or `{ value: undefined }` when the field is missing. Undefined when JSONata must say (not a plain
 * field, or an object or array on the path).
 */
export function nativeValue(
  expression: CompiledExpression,
  input: PreparedInput,
): { readonly value: string | number | boolean | null | undefined } | undefined {
  const field = fieldOf(expression);
  if (field === null) return undefined;
  const value = read(field, input);
  if (value === ASK_JSONATA || (typeof value === 'object' && value !== null)) return undefined;
  if (typeof value === 'number' && !Number.isFinite(value)) return undefined;
  return { value: value as string | number | boolean | null | undefined };
}

/**
 * The truth of a `when` expression without JSONata, or undefined when JSONata must say (the expression is not
 * a simple comparison, or this input needs JSONata's own semantics). Reads only the expression's source: a
 * deferred expression is not compiled here.
 */
export function nativeWhen(expression: CompiledExpression, input: PreparedInput): boolean | undefined {
  const rule = ruleOf(expression);
  if (rule === null) return undefined;
  const verdict = evaluate(rule, input);
  return verdict === ASK_JSONATA ? undefined : verdict;
}
