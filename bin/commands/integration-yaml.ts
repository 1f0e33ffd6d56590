/**
 * `docrelay init`'s edit of the config file: the new integration's stanza inserted as text, so that every
 * other byte (comments, quoting, indentation) stays as the user wrote it.
 */
import { Document, isMap, isPair, isScalar, isSeq, type Node, parseDocument } from 'yaml';
import { CliError } from './types';

/**
 * The config text with the integration's stanza inserted as text at the end of the `integrations:` block (or
 * a new block at the end of the file), indented as the file's items are: every other byte stays as it was
 * written. Throws CliError for a file that is not YAML, an id already taken, or no block to add to.
 */
export function insertIntegration(text: string, stanza: Record<string, unknown>, source: string): string {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw new CliError(`${source} is not valid YAML: run docrelay check`);
  const root = doc.contents;
  if (root !== null && !isMap(root)) throw new CliError(`${source}: the config is not a mapping`);
  const pair = root?.items.find(
    (item) => isPair(item) && isScalar(item.key) && item.key.value === 'integrations',
  );
  const integrations = pair?.value;
  const id = String(stanza.id);
  if (isSeq(integrations)) {
    const taken = integrations.items.some(
      (item) => isMap(item) && String(item.get('id')).toLowerCase() === id.toLowerCase(),
    );
    if (taken) throw new CliError(`${source} already has an integration "${id}"`);
  }

  // A block list: after its last item's last line, as its items are indented.
  if (isSeq(integrations) && !integrations.flow && integrations.items.length > 0) {
    const first = integrations.items[0] as Node;
    const last = integrations.items[integrations.items.length - 1] as Node;
    const dashColumn = column(text, dashBefore(text, rangeOf(first)[0]));
    const keyColumn = isScalar(pair?.key) ? column(text, rangeOf(pair.key)[0]) : 0;
    const step =
      indentStep(text, first) ??
      indentStep(text, root) ??
      Math.max(2, column(text, rangeOf(first)[0]) - dashColumn);
    const block = stanzaText(stanza, step, dashColumn > keyColumn);
    return insertAfterLine(text, rangeOf(last)[1], `\n${indent(block, dashColumn)}`);
  }
  // No list yet (`integrations:` alone, or `[]`): the block goes under the key; no key: a new one at the end.
  const empty =
    integrations === null ||
    integrations === undefined ||
    (isScalar(integrations) && integrations.value === null) ||
    (isSeq(integrations) && integrations.items.length === 0);
  if (!empty) throw new CliError(`${source}: integrations is not a block list; add the integration by hand`);
  const step = indentStep(text, root) ?? 2;
  const block = indent(stanzaText(stanza, step, true), step);
  if (pair === undefined || !isScalar(pair.key)) {
    return `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}integrations:\n${block}`;
  }
  // `integrations: []` loses its `[]`; the rest of its line (a comment) stays.
  const [start, end] = isSeq(integrations) ? rangeOf(integrations) : [0, 0];
  const cleared = isSeq(integrations) ? text.slice(0, start) + text.slice(end) : text;
  return insertAfterLine(cleared, rangeOf(pair.key)[1], block);
}

/** The stanza as a one-item YAML list at column 0, its expressions double-quoted as the shipped config has them. */
function stanzaText(stanza: Record<string, unknown>, step: number, indentSeq: boolean): string {
  const doc = new Document([stanza]);
  const rules = doc.getIn([0, 'documents'], true);
  for (const rule of isSeq(rules) ? rules.items : []) {
    if (!isMap(rule)) continue;
    const data = rule.get('data', true);
    const expressions = [
      rule.get('when', true),
      ...(isMap(data) ? data.items.map((item) => item.value) : []),
    ];
    for (const expression of expressions) if (isScalar(expression)) expression.type = 'QUOTE_DOUBLE';
  }
  return doc.toString({ indent: step, indentSeq, lineWidth: 0 });
}

/**
 * How far the file indents a nested block: under a key of `map` (an integration, or the top level) whose value
 * is a block mapping, the columns from the key to its first child; undefined when no such key shows it.
 */
function indentStep(text: string, map: unknown): number | undefined {
  if (!isMap(map)) return undefined;
  for (const item of map.items) {
    const value = item.value;
    if (!isScalar(item.key) || !isMap(value) || value.flow || !isScalar(value.items[0]?.key)) continue;
    const step = column(text, rangeOf(value.items[0].key)[0]) - column(text, rangeOf(item.key)[0]);
    if (step > 0) return step;
  }
  return undefined;
}

const column = (text: string, at: number): number => at - lineStart(text, at);

const rangeOf = (node: Node): [number, number, number] =>
  (node.range as [number, number, number] | null | undefined) ?? [0, 0, 0];

const lineStart = (text: string, at: number): number => text.lastIndexOf('\n', at - 1) + 1;

/** The offset of the `- ` that opens a block list item whose content starts at `at`. */
function dashBefore(text: string, at: number): number {
  let position = at - 1;
  while (position > 0 && /\s/.test(text[position] ?? '')) position -= 1;
  return position;
}

/** Each non-empty line of the block indented by `columns` spaces. */
const indent = (block: string, columns: number): string => block.replace(/^(?=.)/gm, ' '.repeat(columns));

/** Inserts `insert` at the start of the line after the one `at` is on (or at the end, ending that line). */
function insertAfterLine(text: string, at: number, insert: string): string {
  const newline = at > 0 && text[at - 1] === '\n' ? at - 1 : text.indexOf('\n', at);
  if (newline < 0) return `${text}\n${insert}`;
  return text.slice(0, newline + 1) + insert + text.slice(newline + 1);
}
