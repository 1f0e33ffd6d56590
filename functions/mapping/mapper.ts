/**
 * Maps a delivery to documents: which rules apply (`evaluateRules`, on the ingest's hot path) and each rule's
 * `data`, checked against its template (`mapRule`, at job time). `when` runs in process, as a thread hop
 * would cost more than it; `data`, where the heavy work is, runs in the isolate unless told otherwise.
 */
import type { CompiledIntegration, CompiledRule } from '../config/compile';
import type { Template } from '../docgen/types';
import { coerceValue } from './coerce';
import { MappingError, type MappingProblem } from './errors';
import {
  defineValue,
  type EvaluationOutcome,
  evaluateAll,
  evaluateExpression,
  isFatalProblem,
  type JsonValue,
  type MappingInput,
  type PreparedInput,
  prepareInput,
} from './evaluate';
import { type MappingIsolate, sharedMappingIsolate } from './isolate';
import { nativeWhen } from './native-when';
import {
  chooseTemplateFile,
  propertiesByName,
  requiredNames,
  unknownPropertyProblems,
} from './template-check';

export type { MappingInput } from './evaluate';

/** Where template definitions come from (the client, usually behind `createTemplateCache`). */
export interface TemplateSource {
  /** The template with its properties; rejects for an unknown template or a service failure. */
  getTemplate(id: string): Promise<Template>;
}

/** One document to generate: the rule that produced it, the template (file) and the coerced `data`. */
export interface MappedDocument {
  readonly rule: string;
  readonly templateId: string;
  /** The chosen template file (the configured `fileId`, or the template's only file). */
  readonly templateFileId?: string;
  readonly data: Record<string, unknown>;
}

/** Where a rule's `data` expressions run. */
export interface MapOptions {
  /** An isolate pool, or `'in-process'` (no hard limits: for callers that are themselves isolated). @default the shared pool */
  readonly isolate?: MappingIsolate | 'in-process';
}

function dataEvaluator(options: MapOptions): MappingIsolate['evaluate'] {
  const isolate = options.isolate ?? sharedMappingIsolate();
  return isolate === 'in-process'
    ? evaluateAll
    : (expressions, input) => isolate.evaluate(expressions, input);
}

function prepared(input: MappingInput, integration?: string): PreparedInput {
  const result = prepareInput(input);
  if (!result.ok) throw new MappingError([result.problem], { integration });
  return result.prepared;
}

/**
 * JSONata's boolean casting (as in its predicates): `true`, non-zero numbers, non-empty strings, arrays with a
 * truthy member, non-empty objects. No match (undefined) and `null` are false.
 */
export function isTruthy(value: JsonValue | undefined): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (typeof value === 'string') return value.length > 0;
  if (Array.isArray(value)) return value.some(isTruthy);
  return Object.keys(value).length > 0;
}

/** The rules whose `when` holds for this input, in configuration order. Reads no templates. */
export async function evaluateRules(
  integration: CompiledIntegration,
  input: MappingInput,
): Promise<CompiledRule[]> {
  return matchRules(integration, prepared(input, integration.id));
}

async function matchRules(integration: CompiledIntegration, input: PreparedInput): Promise<CompiledRule[]> {
  const matched: CompiledRule[] = [];
  const problems: MappingProblem[] = [];
  for (const rule of integration.rules) {
    if (rule.when === undefined) {
      matched.push(rule);
      continue;
    }
    // A field compared with a literal needs no JSONata (functions/mapping/native-when.ts).
    const native = nativeWhen(rule.when, input);
    if (native !== undefined) {
      if (native) matched.push(rule);
      continue;
    }
    const outcome = await evaluateExpression(rule.when, input, { rule: rule.name });
    if (!outcome.ok) {
      problems.push({ ...outcome.problem, message: `when: ${outcome.problem.message}` });
      if (isFatalProblem(outcome.problem)) break;
    } else if (isTruthy(outcome.value)) matched.push(rule);
  }
  // A `when` that fails is not "false": silently skipping a rule would lose a document nobody asked to lose.
  if (problems.length > 0) throw new MappingError(problems, { integration: integration.id });
  return matched;
}

/** Maps one rule given its template: evaluates, coerces and checks every property; throws `MappingError`. */
export async function mapRule(
  rule: CompiledRule,
  input: MappingInput,
  template: Template,
  options: MapOptions = {},
): Promise<MappedDocument> {
  return mapPrepared(rule, prepared(input, rule.integration), template, dataEvaluator(options));
}

async function mapPrepared(
  rule: CompiledRule,
  input: PreparedInput,
  template: Template,
  evaluate: MappingIsolate['evaluate'],
): Promise<MappedDocument> {
  const fail = (problems: MappingProblem[]) => new MappingError(problems, { integration: rule.integration });
  const problems: MappingProblem[] = [];
  const choice = chooseTemplateFile(rule, template);
  if (!choice.ok) problems.push(choice.problem);
  const properties = propertiesByName(template);
  problems.push(...unknownPropertyProblems(rule, template, properties));

  // Unknown and read-only properties are reported above and not evaluated.
  const entries = rule.data.flatMap((entry) => {
    const definition = properties.get(entry.property);
    return definition === undefined || definition.readOnly === true ? [] : [{ ...entry, definition }];
  });
  // One round trip for the whole rule; it stops after a fatal problem, so there may be fewer outcomes.
  const outcomes: EvaluationOutcome[] = await evaluate(
    entries.map((entry) => entry.expression),
    input,
  );
  const data: Record<string, unknown> = {};
  const gaveNothing = new Set<string>();
  for (const [index, outcome] of outcomes.entries()) {
    const { property, expression, definition } = entries[index] as (typeof entries)[number];
    if (!outcome.ok) {
      problems.push({ ...outcome.problem, rule: rule.name, property });
      // Time or depth exhausted: stop here rather than spend the budget again on each property.
      if (isFatalProblem(outcome.problem)) throw fail(problems);
      continue;
    }
    if (outcome.value === undefined) {
      gaveNothing.add(property);
      continue;
    }
    const result = coerceValue(definition, outcome.value);
    if (result.kind === 'value') defineValue(data, property, result.value);
    else if (result.kind === 'absent') gaveNothing.add(property);
    else {
      problems.push({
        code: 'MAPPING_INVALID_VALUE',
        rule: rule.name,
        property: result.index === undefined ? property : `${property}[${result.index}]`,
        message: `${result.message} (from ${expression.source})`,
      });
    }
  }

  if (choice.ok) {
    for (const name of requiredNames(choice.file)) {
      if (Object.hasOwn(data, name) || problems.some((p) => p.property === name)) continue;
      problems.push({
        code: 'MAPPING_REQUIRED_MISSING',
        rule: rule.name,
        property: name,
        message: gaveNothing.has(name)
          ? `required by template file ${choice.file.id}, but its expression gave no value for this payload`
          : `required by template file ${choice.file.id} but not mapped in data`,
      });
    }
  }
  if (problems.length > 0) throw fail(problems);
  return {
    rule: rule.name,
    templateId: rule.config.template.id,
    templateFileId: choice.ok ? choice.file.id : undefined,
    data,
  };
}

/**
 * Maps a delivery: every rule whose `when` holds yields one document. Template read failures propagate as
 * they are (they may be retryable); mapping problems of all rules are collected into one `MappingError`.
 */
export async function mapDelivery(
  integration: CompiledIntegration,
  input: MappingInput,
  templates: TemplateSource,
  options: MapOptions = {},
): Promise<MappedDocument[]> {
  const evaluate = dataEvaluator(options);
  const ready = prepared(input, integration.id);
  const rules = await matchRules(integration, ready);
  const documents: MappedDocument[] = [];
  const problems: MappingProblem[] = [];
  for (const rule of rules) {
    const template = await templates.getTemplate(rule.config.template.id);
    try {
      documents.push(await mapPrepared(rule, ready, template, evaluate));
    } catch (error) {
      if (!(error instanceof MappingError)) throw error;
      problems.push(...error.problems);
      if (error.problems.some(isFatalProblem)) break;
    }
  }
  if (problems.length > 0) throw new MappingError(problems, { integration: integration.id });
  return documents;
}
