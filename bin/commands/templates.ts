/**
 * `docrelay templates list|show <id> [--json]`: the service's templates, or one with its properties, from the
 * service `check` and `map` use (service-target.ts).
 */
import { readLocalSettings } from '../../functions/commons/env';
import type { Template } from '../../functions/docgen/types';
import { callService, connectConfiguredService } from './service-target';
import { CliError, type CommandContext } from './types';

/** Lists the templates as a table (or JSON). */
export async function listTemplates(ctx: CommandContext, options: { json?: boolean }): Promise<number> {
  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const { client, connection } = await connectConfiguredService(settings);
  const templates = await callService(connection, settings, () => client.listAllTemplates());
  ctx.stdout.write(
    options.json === true ? `${JSON.stringify(templates, null, 2)}\n` : formatTemplateList(templates),
  );
  return 0;
}

/** Shows one template's files and properties (or JSON). */
export async function showTemplate(
  ctx: CommandContext,
  templateId: string,
  options: { json?: boolean },
): Promise<number> {
  if (templateId.trim() === '') throw new CliError('templates show needs a template id', 2);
  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const { client, connection } = await connectConfiguredService(settings);
  const template = await callService(connection, settings, () => client.getTemplate(templateId));
  ctx.stdout.write(
    options.json === true ? `${JSON.stringify(template, null, 2)}\n` : formatTemplate(template),
  );
  return 0;
}

/** The template list as a table: id, name, created, number of files. */
export function formatTemplateList(templates: readonly Template[]): string {
  if (templates.length === 0) return 'no templates in this workspace\n';
  return formatTable(
    ['ID', 'NAME', 'CREATED', 'FILES'],
    templates.map((t) => [t.id, t.name, t.createdDateTime, String(t.files.length)]),
  );
}

/** One template: its files (with the properties each uses) and its properties. */
export function formatTemplate(template: Template): string {
  const lines: string[] = [`template ${printable(template.id)}: ${printable(template.name)}`];
  if (template.createdDateTime !== '') lines.push(`created:  ${printable(template.createdDateTime)}`);
  if (template.description !== undefined && template.description !== '') {
    lines.push(`description: ${printable(template.description)}`);
  }
  lines.push('', `files (${template.files.length}):`);
  for (const file of template.files) {
    lines.push(`  ${printable(file.id)}  ${printable(file.filename)}  ${printable(file.mimeType)}`);
    const used = file.usedProperties ?? [];
    const usedText =
      used.length === 0
        ? '(none listed)'
        : used.map((u) => `${printable(u.name)}${u.required ? ' (required)' : ''}`).join(', ');
    lines.push(`    uses: ${usedText}`);
  }
  if (template.files.length > 1) {
    lines.push('  (more than one file: choose one with template.fileId in the rule)');
  }
  const properties = template.properties ?? [];
  lines.push('', `properties (${properties.length}):`);
  const table =
    properties.length === 0
      ? '  (none)\n'
      : formatTable(
          ['NAME', 'TYPE', 'LABEL', 'ALLOWED VALUES', 'DEFAULT'],
          properties.map((p) => [
            p.name,
            p.multipleValues ? `${p.type}[]` : p.type,
            p.label ?? '',
            p.allowedValues?.join(' | ') ?? '',
            p.defaultValue ?? '',
          ]),
          '  ',
        );
  return `${lines.join('\n')}\n${table}`;
}

/** Left-aligned columns separated by two spaces. */
function formatTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>, indent = ''): string {
  const cells = [header, ...rows].map((row) => row.map((cell) => printable(cell)));
  const widths = header.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  return cells
    .map((row) => `${indent}${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ')}`.trimEnd())
    .join('\n')
    .concat('\n');
}

// Text from the service goes to a terminal: control characters could rewrite it.
const printable = (text: string): string => text.replace(/\p{Cc}/gu, '?');
