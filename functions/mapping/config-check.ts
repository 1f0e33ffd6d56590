/**
 * `docrelay check` against the live templates: every rule of a loaded configuration checked against its
 * template, every problem reported at once, each located by its config path.
 */
import { type CompiledIntegration, formatKey, type LoadedConfig } from '../config/compile';
import type { ConfigProblem } from '../config/errors';
import type { Template } from '../docgen/types';
import type { MappingProblem } from './errors';
import type { TemplateSource } from './mapper';
import { checkRuleAgainstTemplate } from './template-check';

/** What `checkConfigAgainstTemplates` found. */
export interface ConfigCheckReport {
  /** Problems that make `check` fail, located by config path. */
  readonly problems: readonly ConfigProblem[];
  /** Things worth knowing that do not fail `check`. */
  readonly warnings: readonly ConfigProblem[];
  /** Template ids read. */
  readonly templatesChecked: readonly string[];
}

/** Decides whether a template read failure means "no such template" (reported) or something else (thrown). */
export type IsNotFound = (error: unknown) => boolean;

const codeOf = (error: unknown): unknown =>
  typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;

/** The default `IsNotFound`: the client's `DOCGEN_NOT_FOUND` code. */
export const isTemplateNotFound: IsNotFound = (error) => codeOf(error) === 'DOCGEN_NOT_FOUND';

/** Warnings that need no template: scheme none accepts anyone's webhooks. */
export function configWarnings(loaded: LoadedConfig): ConfigProblem[] {
  const warnings: ConfigProblem[] = [];
  for (const integration of loaded.integrations.values()) {
    if (integration.config.verify?.scheme === 'none') {
      warnings.push({
        path: `integrations[${integration.index}].verify.scheme`,
        message: `none: POST /v1/hooks/${integration.id} accepts unsigned webhooks from anyone${
          integration.config.eventBridge
            ? ' (events need no verify: leave it out and the integration has no webhook URL)'
            : ''
        }`,
      });
    }
  }
  return warnings;
}

/** Checks every rule against its template; template read failures other than "not found" are thrown. */
export async function checkConfigAgainstTemplates(
  loaded: LoadedConfig,
  templates: TemplateSource,
  isNotFound: IsNotFound = isTemplateNotFound,
): Promise<ConfigCheckReport> {
  const problems: ConfigProblem[] = [];
  const read = new Map<string, Promise<Template | undefined>>();
  const getTemplate = (id: string): Promise<Template | undefined> => {
    let pending = read.get(id);
    if (pending === undefined) {
      pending = templates.getTemplate(id).catch((error: unknown) => {
        if (isNotFound(error)) return undefined;
        throw error;
      });
      read.set(id, pending);
    }
    return pending;
  };
  for (const integration of loaded.integrations.values()) {
    for (const [index, rule] of integration.rules.entries()) {
      const rulePath = `integrations[${integration.index}].documents[${index}]`;
      const templateId = rule.config.template.id;
      const template = await getTemplate(templateId);
      if (template === undefined) {
        problems.push({
          path: `${rulePath}.template.id`,
          message: `unknown template "${templateId}" (run docrelay templates list)`,
        });
        continue;
      }
      for (const problem of checkRuleAgainstTemplate(rule, template)) {
        problems.push({ path: pathOf(rulePath, problem), message: describe(integration, problem) });
      }
    }
  }
  return { problems, warnings: configWarnings(loaded), templatesChecked: [...read.keys()] };
}

function pathOf(rulePath: string, problem: MappingProblem): string {
  if (problem.code === 'MAPPING_TEMPLATE_FILE') return `${rulePath}.template`;
  if (problem.code === 'MAPPING_REQUIRED_MISSING') return `${rulePath}.data`;
  return problem.property === undefined ? rulePath : `${rulePath}.data${formatKey(problem.property)}`;
}

function describe(integration: CompiledIntegration, problem: MappingProblem): string {
  const subject =
    problem.code === 'MAPPING_REQUIRED_MISSING' && problem.property !== undefined
      ? `${JSON.stringify(problem.property)} is `
      : '';
  return `${subject}${problem.message} [${integration.id}/${problem.rule ?? '?'}]`;
}
