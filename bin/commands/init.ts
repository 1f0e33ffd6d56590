/**
 * `docrelay init <integrationId> --scheme <scheme> [--template <id>]`: adds an integration to the config file
 * as text (every other byte kept), with its local secret, a sample payload and a rule built from the
 * service's template. The new config is validated before anything is written, so a refusal changes nothing.
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type LocalSettings, readLocalSettings } from '../../functions/commons/env';
import { ConfigError, formatConfigProblem } from '../../functions/config/errors';
import { parseConfig } from '../../functions/config/load';
import { IntegrationConfigSchema } from '../../functions/config/schema';
import { DocgenNotFoundError } from '../../functions/docgen/errors';
import type { Template, TemplateProperty } from '../../functions/docgen/types';
import { SENDER_SCHEMES, senderScheme } from '../../functions/senders';
import { connectDocgenClient, type ServiceSettings } from '../../local/service-connection';
import { displayPath } from '../../local/stack/config-report';
import { ensureDevSecrets, writeJsonAtomic } from '../../local/state-files';
import { insertIntegration } from './integration-yaml';
import { firstLine } from './ops-args';
import { CliError, type CommandContext } from './types';

/** The template a new integration's rule uses unless told: the emulator's plain note (Title, Body). */
export const DEFAULT_TEMPLATE = '9003';

/** How long init waits for the service's answer before it writes the offline rule (one attempt). */
const TEMPLATE_TIMEOUT_MS = 5_000;

/** The scheme names init takes, from the senders registry. */
export const schemeNames = (): readonly string[] => SENDER_SCHEMES;

/** The secret name init gives an integration's signing secret. */
export const secretNameFor = (integrationId: string): string => `docrelay/${integrationId}-webhook`;

/** The new integration's rule: its template, its data (property -> expression) and the payload fields read. */
export interface RulePlan {
  readonly template: { readonly id: string; readonly fileId?: string };
  readonly data: Readonly<Record<string, string>>;
  /** Sample payload fields the data's expressions read, with values of the properties' types. */
  readonly sample: Readonly<Record<string, unknown>>;
  /** What to tell the user about the rule, a line each. */
  readonly notes: readonly string[];
}

/** The rule when the template cannot be read: the plain note's properties, a guess for any other template. */
export function offlineRule(templateId: string = DEFAULT_TEMPLATE): RulePlan {
  return {
    template: { id: templateId },
    data: templateId === DEFAULT_TEMPLATE ? { Title: 'title', Body: 'body' } : { Title: 'title' },
    sample: {},
    notes: [],
  };
}

/**
 * The rule built from the template as the service has it: its first file (named when it has several), and
 * each property that file requires mapped to a payload field of the same name in snake_case, a placeholder
 * the user points at the real payload.
 */
export function ruleFromTemplate(template: Template, integrationId: string): RulePlan {
  const file = template.files[0];
  const used = file?.usedProperties ?? [];
  const required = used.filter((property) => property.required).map((property) => property.name);
  const optional = (
    used.length > 0 ? used.map((p) => p.name) : (template.properties ?? []).map((p) => p.name)
  ).filter((name) => !required.includes(name));
  const properties = new Map((template.properties ?? []).map((property) => [property.name, property]));
  // The sample's own fields stay its own: body-id schemes (stripe, slack) read `id` and `event_id`.
  const fields = new Set<string>(['id', 'event_id', 'type']);
  const data: Record<string, string> = {};
  const sample: Record<string, unknown> = {};
  for (const name of required) {
    const field = fieldName(name, fields);
    data[name] = field;
    sample[field] = sampleValue(name, properties.get(name), integrationId);
  }
  const several = template.files.length > 1 && file !== undefined;
  const notes = [
    `  template: ${template.id} (${printable(template.name)})${several ? `, file ${printable(file.id)} (${printable(file.filename)}; one of ${template.files.length}: template.fileId picks another)` : ''}`,
    required.length === 0
      ? '  data:     none required'
      : `  data:     ${required.map((name) => `${printable(name)} <- ${data[name]}`).join(', ')} (placeholders: point them at your payload)`,
    ...(optional.length === 0
      ? []
      : [`  optional: ${optional.map(printable).join(', ')} (not mapped; add them under data)`]),
  ];
  return { template: { id: template.id, ...(several ? { fileId: file.id } : {}) }, data, sample, notes };
}

// Text from the service goes to a terminal: control characters could rewrite it.
const printable = (text: string): string => text.replace(/\p{Cc}/gu, '?');

// Words JSONata reads as operators or values, not as a field's name.
const JSONATA_WORDS = new Set(['and', 'or', 'in', 'true', 'false', 'null', 'function']);

/** A payload field name for a property (`Customer Name` -> `customer_name`), unique among `taken`. */
function fieldName(property: string, taken: Set<string>): string {
  let base = property
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (!/^[a-z]/.test(base)) base = base === '' ? 'field' : `field_${base}`;
  if (JSONATA_WORDS.has(base)) base = `${base}_value`;
  let field = base;
  for (let n = 2; taken.has(field); n += 1) field = `${base}_${n}`;
  taken.add(field);
  return field;
}

/** A sample value the property's type takes (a list of one for a multi-valued property); text if unknown. */
function sampleValue(name: string, property: TemplateProperty | undefined, integrationId: string): unknown {
  const one = ((): unknown => {
    switch (property?.type) {
      case 'date':
        return new Date().toISOString().slice(0, 10);
      case 'number':
        return 12.5;
      case 'integer':
        return 1;
      case 'boolean':
        return true;
      case 'select':
        return property.allowedValues?.[0] ?? property.defaultValue ?? 'value';
      case 'object':
        return {};
      default:
        return `${property?.label ?? name} from ${integrationId}`;
    }
  })();
  return property?.multipleValues === true ? [one] : one;
}

/** The `verify` block for the scheme, with its secret name and placeholders for its required options. */
function verifyBlock(integrationId: string, schemeName: string): Record<string, unknown> {
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
  return verify;
}

/** The `integrations[]` entry for a new integration (plain data, as it is written to the YAML). */
export function integrationStanza(
  integrationId: string,
  schemeName: string,
  rule: RulePlan = offlineRule(),
): Record<string, unknown> {
  return {
    id: integrationId,
    verify: verifyBlock(integrationId, schemeName),
    documents: [{ name: 'document', template: rule.template, data: rule.data }],
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
export function samplePayload(
  integrationId: string,
  rule: RulePlan = offlineRule(),
): Record<string, unknown> {
  return {
    id: `evt_${randomBytes(6).toString('hex')}`,
    event_id: `Ev${randomBytes(6).toString('hex').toUpperCase()}`,
    type: 'sample',
    title: `Hello from ${integrationId}`,
    body: 'A sample payload written by docrelay init: edit it, or send your own.',
    ...rule.sample,
  };
}

/** The integration id rule of the config schema, as one line (init's help says the same). */
export function integrationIdProblem(integrationId: string): string | undefined {
  return IntegrationConfigSchema.shape.id.safeParse(integrationId).error?.issues[0]?.message;
}

/**
 * The template from the service `check` and `map` use (DOCGEN_BASE_URL, a running stack or emulator, else
 * the config's service): its rule, or the offline rule with a note saying why. A template the service does
 * not have is refused.
 */
async function planRule(
  settings: LocalSettings,
  text: string,
  source: string,
  templateId: string,
  integrationId: string,
): Promise<{ rule: RulePlan; note?: string }> {
  const offline = offlineRule(templateId);
  const guess = `the rule maps ${Object.keys(offline.data).join(' and ')}, the plain note's properties: edit them to the template's, then run docrelay check`;
  let connected: Awaited<ReturnType<typeof connectDocgenClient>>;
  try {
    connected = await connectDocgenClient(settings, serviceOf(text, source), {
      retry: { maxAttempts: 1 },
      timeoutMs: TEMPLATE_TIMEOUT_MS,
    });
  } catch {
    return {
      rule: offline,
      note: `note: no service to read template ${templateId} from (no local stack, emulator, DOCGEN_BASE_URL or service.baseUrl); ${guess}`,
    };
  }
  const { client, connection } = connected;
  try {
    return { rule: ruleFromTemplate(await client.getTemplate(templateId), integrationId) };
  } catch (error) {
    if (error instanceof DocgenNotFoundError) {
      throw new CliError(
        `unknown template "${templateId}" at ${connection.baseUrl}: docrelay templates list shows the templates there`,
      );
    }
    return {
      rule: offline,
      note: `note: could not read template ${templateId} from ${connection.baseUrl} (${firstLine(error)}); ${guess}`,
    };
  }
}

/** The config's service settings; none while the config does not load (init validates the result anyway). */
function serviceOf(text: string, source: string): ServiceSettings | undefined {
  try {
    return parseConfig(text, source).config.service;
  } catch {
    return undefined;
  }
}

/** Adds the integration; resolves to the exit code. */
export async function init(
  ctx: CommandContext,
  integrationId: string,
  options: { scheme: string; template?: string },
): Promise<number> {
  const idProblem = integrationIdProblem(integrationId);
  if (idProblem !== undefined) throw new CliError(`"${integrationId}": ${idProblem}`, 2);
  verifyBlock(integrationId, options.scheme);
  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const source = displayPath(settings.configPath, ctx.cwd);
  let text: string;
  try {
    text = await readFile(settings.configPath, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${source} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  // An id taken (or a file init cannot add to) is refused before the service is asked.
  insertIntegration(text, integrationStanza(integrationId, options.scheme), source);
  const { rule, note } = await planRule(
    settings,
    text,
    source,
    options.template ?? DEFAULT_TEMPLATE,
    integrationId,
  );
  const stanza = integrationStanza(integrationId, options.scheme, rule);
  const next = insertIntegration(text, stanza, source);

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
  await writeJsonAtomic(samplePath, samplePayload(integrationId, rule));
  const secretCreated = await createSecret(settings.secretsFile, integrationId, options.scheme);
  // Secrets the scheme's own options name (e.g. meta's verify token) get development values too.
  const verifyToken = (stanza.verify as { verifyTokenSecret?: string }).verifyTokenSecret;
  if (verifyToken !== undefined) await ensureDevSecrets(settings.secretsFile, [verifyToken]);
  await writeFile(settings.configPath, next);

  if (note !== undefined) ctx.stderr.write(`${note}\n`);
  const sample = displayPath(samplePath, ctx.cwd);
  ctx.stdout.write(
    [
      `added integration "${integrationId}" (scheme ${options.scheme}) to ${source}`,
      secretCreated === undefined
        ? '  secret:   none (this scheme takes no secret)'
        : `  secret:   ${secretCreated.name} in ${displayPath(settings.secretsFile, ctx.cwd)}${secretCreated.created ? ' (a new development value)' : ' (kept the existing value)'}`,
      ...rule.notes,
      `  sample:   ${sample}`,
      `  webhook:  POST /v1/hooks/${integrationId}`,
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
