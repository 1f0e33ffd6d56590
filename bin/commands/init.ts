/**
 * `docrelay init <integrationId> --scheme <scheme> [--template <id>]`: adds an integration to the config file
 * (comments and layout kept), creates its local secret and a sample payload, and prints the next commands.
 * The new config is validated before anything is written: a refusal changes nothing.
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Document, isMap, isPair, isScalar, isSeq, type Node, parseDocument } from 'yaml';
import { readLocalSettings } from '../../functions/commons/env';
import { ConfigError, formatConfigProblem } from '../../functions/config/errors';
import { parseConfig } from '../../functions/config/load';
import { SENDER_SCHEMES, senderScheme } from '../../functions/senders';
import { displayPath } from '../../local/stack/config-report';
import { ensureDevSecrets, writeJsonAtomic } from '../../local/state-files';
import { CliError, type CommandContext } from './types';

/** The template a new integration's rule uses unless told: the emulator's plain note (Title, Body). */
const DEFAULT_TEMPLATE = '9003';

/** The scheme names init takes, from the senders registry. */
export const schemeNames = (): readonly string[] => SENDER_SCHEMES;

/** The secret name init gives an integration's signing secret. */
export const secretNameFor = (integrationId: string): string => `docrelay/${integrationId}-webhook`;

/** The `integrations[]` entry for a new integration (plain data, as it is written to the YAML). */
export function integrationStanza(
  integrationId: string,
  schemeName: string,
  templateId: string = DEFAULT_TEMPLATE,
): Record<string, unknown> {
  const scheme = senderScheme(schemeName);
  if (scheme === undefined) {
    throw new CliError(`unknown scheme "${schemeName}": one of ${SENDER_SCHEMES.join(', ')}`, 2);
  }
  const verify: Record<string, unknown> = { scheme: scheme.name };
  if (scheme.takesSecret) verify.secret = secretNameFor(integrationId);
  for (const [option, rule] of Object.entries(scheme.options)) {
    if (rule?.required === undefined) continue;
    // A required option: its one accepted value, else a placeholder that runs locally (edit it for the sender).
    const value = rule.mustBe ?? requiredPlaceholder(integrationId, option);
    if (value === undefined) {
      throw new CliError(
        `scheme ${scheme.name} needs ${option} (${rule.required}): add the integration by hand`,
      );
    }
    verify[option] = value;
  }
  return {
    id: integrationId,
    verify,
    documents: [
      {
        name: 'document',
        template: { id: templateId },
        data: templateId === DEFAULT_TEMPLATE ? { Title: 'title', Body: 'body' } : { Title: 'title' },
      },
    ],
  };
}

/** Placeholders of the options a scheme requires, by option name (undefined: none known). */
function requiredPlaceholder(integrationId: string, option: string): string | undefined {
  switch (option) {
    case 'header':
      return 'x-signature';
    case 'verifyTokenSecret':
      return `docrelay/${integrationId}-verify-token`;
    case 'topicArn':
      return `arn:aws:sns:us-east-1:000000000000:${integrationId}`;
    default:
      return undefined;
  }
}

/** A sample payload for the new integration's rule (with the ids the body-id schemes read). */
export function samplePayload(integrationId: string): Record<string, unknown> {
  return {
    id: `evt_${randomBytes(6).toString('hex')}`,
    event_id: `Ev${randomBytes(6).toString('hex').toUpperCase()}`,
    type: 'sample',
    title: `Hello from ${integrationId}`,
    body: 'A sample payload written by docrelay init: edit it, or send your own.',
  };
}

/** Adds the integration; resolves to the exit code. */
export async function init(
  ctx: CommandContext,
  integrationId: string,
  options: { scheme: string; template?: string },
): Promise<number> {
  const stanza = integrationStanza(integrationId, options.scheme, options.template);
  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const source = displayPath(settings.configPath, ctx.cwd);
  let text: string;
  try {
    text = await readFile(settings.configPath, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${source} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const next = insertIntegration(text, stanza, source);

  // Validated as a whole before anything is written.
  try {
    parseConfig(next, source);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const first = error.problems[0];
    throw new CliError(
      `the new integration would not be valid: ${first === undefined ? error.message : formatConfigProblem(first, source)}`,
    );
  }

  const samplePath = join(dirname(settings.configPath), 'samples', `${integrationId}.json`);
  await writeJsonAtomic(samplePath, samplePayload(integrationId));
  const secretCreated = await createSecret(settings.secretsFile, integrationId, options.scheme);
  // Secrets the scheme's own options name (e.g. meta's verify token) get development values too.
  const verifyToken = (stanza.verify as { verifyTokenSecret?: string }).verifyTokenSecret;
  if (verifyToken !== undefined) await ensureDevSecrets(settings.secretsFile, [verifyToken]);
  await writeFile(settings.configPath, next);

  const sample = displayPath(samplePath, ctx.cwd);
  ctx.stdout.write(
    [
      `added integration "${integrationId}" (scheme ${options.scheme}) to ${source}`,
      secretCreated === undefined
        ? '  secret:  none (this scheme takes no secret)'
        : `  secret:  ${secretCreated.name} in ${displayPath(settings.secretsFile, ctx.cwd)}${secretCreated.created ? ' (a new development value)' : ' (kept the existing value)'}`,
      `  sample:  ${sample}`,
      `  webhook: POST /v1/hooks/${integrationId}`,
      'next:',
      '  npx docrelay check                  # the config against the templates',
      '  npm start                           # or nothing: a running stack picks up the change',
      `  npx docrelay map ${integrationId} --payload ${sample} --offline`,
      `  npx docrelay send ${integrationId} --payload ${sample} --wait`,
      '',
    ].join('\n'),
  );
  return 0;
}

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

/** Creates the integration's local secret unless present; undefined when the scheme takes none. */
async function createSecret(
  file: string,
  integrationId: string,
  schemeName: string,
): Promise<{ name: string; created: boolean } | undefined> {
  const scheme = senderScheme(schemeName);
  if (scheme === undefined || !scheme.takesSecret) return undefined;
  const name = secretNameFor(integrationId);
  let values: Record<string, string> = {};
  try {
    values = JSON.parse(await readFile(file, 'utf8')) as Record<string, string>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (typeof values[name] === 'string' && values[name] !== '') return { name, created: false };
  const random = randomBytes(24);
  values[name] = scheme.devSecret?.(random) ?? `dev_${random.toString('hex')}`;
  await writeJsonAtomic(file, values, 0o600);
  return { name, created: true };
}
