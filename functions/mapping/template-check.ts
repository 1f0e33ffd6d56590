/**
 * What can be checked of a rule against its template without a payload: the file choice, property names,
 * required properties left unmapped, select literals. `docrelay check` reports these; the mapper enforces
 * them on every delivery so a template changed after deploy fails loudly instead of dropping data.
 */
import type { CompiledRule } from '../config/compile';
import { stringLiteralOf } from '../config/expressions';
import { didYouMean } from '../config/suggest';
import type { Template, TemplateFile, TemplateProperty } from '../docgen/types';
import type { MappingProblem } from './errors';

/** The template file a rule generates: its `fileId`, else the template's only file. */
export function chooseTemplateFile(
  rule: CompiledRule,
  template: Template,
): { ok: true; file: TemplateFile } | { ok: false; problem: MappingProblem } {
  const files = template.files ?? [];
  const list = files.map((f) => `${f.id} (${f.filename})`).join(', ');
  const wanted = rule.config.template.fileId;
  if (wanted !== undefined) {
    const file = files.find((f) => f.id === wanted);
    return file !== undefined
      ? { ok: true, file }
      : {
          ok: false,
          problem: {
            code: 'MAPPING_TEMPLATE_FILE',
            rule: rule.name,
            message: `template ${template.id} (${template.name}) has no file "${wanted}"; its files: ${list || 'none'}`,
          },
        };
  }
  const [only, ...others] = files;
  if (only !== undefined && others.length === 0) return { ok: true, file: only };
  return {
    ok: false,
    problem: {
      code: 'MAPPING_TEMPLATE_FILE',
      rule: rule.name,
      message:
        only === undefined
          ? `template ${template.id} (${template.name}) has no files`
          : `template ${template.id} (${template.name}) has ${files.length} files: set template.fileId to one of ${list}`,
    },
  };
}

/** Template properties by name. */
export function propertiesByName(template: Template): ReadonlyMap<string, TemplateProperty> {
  return new Map((template.properties ?? []).map((p) => [p.name, p]));
}

/** Names the template file requires (`usedProperties[].required`). */
export function requiredNames(file: TemplateFile): string[] {
  return (file.usedProperties ?? []).filter((u) => u.required).map((u) => u.name);
}

/** Every problem of a rule against its template that does not depend on a payload. */
export function checkRuleAgainstTemplate(rule: CompiledRule, template: Template): MappingProblem[] {
  const problems: MappingProblem[] = [];
  const properties = propertiesByName(template);
  problems.push(...unknownPropertyProblems(rule, template, properties));
  for (const { property, expression } of rule.data) {
    const definition = properties.get(property);
    const literal = stringLiteralOf(expression);
    if (definition?.type === 'select' && literal !== undefined) {
      const allowed = definition.allowedValues ?? [];
      if (allowed.length > 0 && !allowed.includes(literal)) {
        problems.push({
          code: 'MAPPING_INVALID_VALUE',
          rule: rule.name,
          property,
          message: `"${literal}" is not one of the allowed values ${allowed.map((v) => JSON.stringify(v)).join(', ')}${didYouMean(literal, allowed)}`,
        });
      }
    }
  }
  const choice = chooseTemplateFile(rule, template);
  if (!choice.ok) problems.push(choice.problem);
  else {
    const mapped = new Set(rule.data.map((d) => d.property));
    for (const name of requiredNames(choice.file)) {
      if (!mapped.has(name)) {
        problems.push({
          code: 'MAPPING_REQUIRED_MISSING',
          rule: rule.name,
          property: name,
          message: `required by template file ${choice.file.id} (${choice.file.filename}) but not mapped in data`,
        });
      }
    }
  }
  return problems;
}

/** Mapped names the template does not define (a typo would otherwise be dropped), and read-only ones. */
export function unknownPropertyProblems(
  rule: CompiledRule,
  template: Template,
  properties: ReadonlyMap<string, TemplateProperty> = propertiesByName(template),
): MappingProblem[] {
  const problems: MappingProblem[] = [];
  for (const { property } of rule.data) {
    const definition = properties.get(property);
    if (definition === undefined) {
      problems.push({
        code: 'MAPPING_UNKNOWN_PROPERTY',
        rule: rule.name,
        property,
        message: `template ${template.id} (${template.name}) has no such property${didYouMean(property, properties.keys())}`,
      });
    } else if (definition.readOnly === true) {
      problems.push({
        code: 'MAPPING_UNKNOWN_PROPERTY',
        rule: rule.name,
        property,
        message: `is read-only in template ${template.id}; the service sets it`,
      });
    }
  }
  return problems;
}
