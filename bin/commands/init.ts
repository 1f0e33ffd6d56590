/**
 * `docrelay init <integrationId> --scheme <scheme> [--template <id>]`: adds an integration to the config file
 * (comments and layout kept), creates its local secret and a sample payload, and prints the next commands.
 * The new config is validated before anything is written: a refusal changes nothing.
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { isMap, isSeq, parseDocument } from 'yaml';
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
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw new CliError(`${source} is not valid YAML: run docrelay check`);
  const integrations = doc.get('integrations');
  if (integrations !== undefined && integrations !== null && !isSeq(integrations)) {
    throw new CliError(`${source}: integrations is not a list`);
  }
  const taken = isSeq(integrations)
    ? integrations.items.some(
        (item) => isMap(item) && String(item.get('id')).toLowerCase() === integrationId.toLowerCase(),
      )
    : false;
  if (taken) throw new CliError(`${source} already has an integration "${integrationId}"`);
  if (isSeq(integrations)) integrations.add(doc.createNode(stanza));
  else doc.set('integrations', doc.createNode([stanza]));
  const next = doc.toString();

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
