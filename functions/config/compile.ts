/**
 * The validated configuration with every JSONata expression compiled once: at load time (mapping a delivery
 * then never parses an expression, and a syntax error can never surface at runtime), or, for a configuration
 * checked before (the bundled one), on each expression's first use.
 */
import {
  type CompiledExpression,
  compileExpression,
  deferExpression,
  type ExpressionLimits,
} from './expressions';
import type { DocrelayConfig, DocumentRule, IntegrationConfig } from './schema';

/** One `data` entry: the template property and the expression giving its value. */
export interface CompiledDataEntry {
  readonly property: string;
  readonly expression: CompiledExpression;
}

/** A document rule with its expressions compiled. */
export interface CompiledRule {
  /** Id of the integration the rule belongs to. */
  readonly integration: string;
  /** Rule name (unique within the integration). */
  readonly name: string;
  /** The rule as configured. */
  readonly config: DocumentRule;
  /** The `when` predicate; absent means the rule always applies. */
  readonly when?: CompiledExpression;
  /** The `data` entries, in configuration order. */
  readonly data: readonly CompiledDataEntry[];
}

/** An integration with its expressions compiled. */
export interface CompiledIntegration {
  readonly id: string;
  /** Index of the integration in the configuration file (for messages). */
  readonly index: number;
  /** The integration as configured (defaults filled). */
  readonly config: IntegrationConfig;
  /** The configured `deliveryId` expression; absent means the scheme's default. */
  readonly deliveryId?: CompiledExpression;
  /** The document rules, in configuration order. */
  readonly rules: readonly CompiledRule[];
}

/** The configuration ready for use: validated, defaults filled, expressions compiled. */
export interface LoadedConfig {
  /** The validated configuration. */
  readonly config: DocrelayConfig;
  /** Integrations by id. */
  readonly integrations: ReadonlyMap<string, CompiledIntegration>;
  /** Where the configuration came from (file path or label), for messages. */
  readonly source: string;
}

/** How `compileConfig` compiles. */
export interface CompileOptions {
  /**
   * Compile each expression on its first use (`deferExpression`) instead of now: only for a configuration
   * whose expressions were checked already. @default false
   */
  readonly lazy?: boolean;
}

/** Compiles every expression of an already validated configuration (now, or lazily: `CompileOptions`). */
export function compileConfig(
  config: DocrelayConfig,
  source: string,
  limits?: ExpressionLimits,
  options: CompileOptions = {},
): LoadedConfig {
  const compile = options.lazy === true ? deferExpression : compileExpression;
  const integrations = new Map<string, CompiledIntegration>();
  config.integrations.forEach((integration, index) => {
    const base = `integrations[${index}]`;
    const rules = integration.documents.map((rule, ruleIndex): CompiledRule => {
      const rulePath = `${base}.documents[${ruleIndex}]`;
      return {
        integration: integration.id,
        name: rule.name,
        config: rule,
        when: rule.when === undefined ? undefined : compile(rule.when, `${rulePath}.when`, limits),
        data: Object.entries(rule.data).map(([property, source]) => ({
          property,
          expression: compile(source, `${rulePath}.data${formatKey(property)}`, limits),
        })),
      };
    });
    integrations.set(integration.id, {
      id: integration.id,
      index,
      config: integration,
      deliveryId:
        integration.deliveryId === undefined
          ? undefined
          : compile(integration.deliveryId, `${base}.deliveryId`, limits),
      rules,
    });
  });
  return { config, integrations, source };
}

/** Finds a rule by integration id and rule name (the worker's lookup at job time). */
export function findRule(
  loaded: LoadedConfig,
  integrationId: string,
  ruleName: string,
): CompiledRule | undefined {
  return loaded.integrations.get(integrationId)?.rules.find((rule) => rule.name === ruleName);
}

/** `.name` for identifier-like keys, `["a key"]` for the others. */
export function formatKey(key: string | number): string {
  if (typeof key === 'number') return `[${key}]`;
  return /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/** Formats a path as `integrations[1].documents[0].data.Plan`. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  const text = path.map((key) => formatKey(typeof key === 'symbol' ? String(key) : key)).join('');
  return text.startsWith('.') ? text.slice(1) : text;
}
