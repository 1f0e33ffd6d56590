/**
 * `docrelay map <integrationId> --payload <file> [--header name:value]... [--query k=v]...`: prints the
 * documents a payload would become, as JSON. Reads templates, creates nothing.
 */
import { readLocalSettings } from '../../functions/commons/env';
import { mapDelivery } from '../../functions/mapping/mapper';
import { createTemplateCache } from '../../functions/mapping/template-cache';
import { connectDocgenClient } from '../../local/service-connection';
import {
  findIntegration,
  firstLine,
  loadConfigOrExplain,
  parseCommandArgs,
  parseHeaderOptions,
  parseQueryOptions,
  readInputFile,
  requirePositionals,
} from './ops-args';
import { CliError, type CommandRun } from './types';

const USAGE =
  'usage: docrelay map <integrationId> --payload <file> [--header name:value]... [--query key=value]...';

/** Maps the payload file with the integration's rules and prints `[ { rule, templateId, templateFileId, data } ]`. */
export const run: CommandRun = async (ctx) => {
  const { values, positionals } = parseCommandArgs(
    ctx.argv,
    {
      payload: { type: 'string' },
      header: { type: 'string', multiple: true },
      query: { type: 'string', multiple: true },
    },
    USAGE,
  );
  const [integrationId] = requirePositionals(positionals, ['integrationId'], USAGE) as [string];
  if (values.payload === undefined) throw new CliError(`--payload <file> is required (${USAGE})`, 2);
  const headers = parseHeaderOptions(values.header ?? [], USAGE);
  const query = parseQueryOptions(values.query ?? [], USAGE);

  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const loaded = await loadConfigOrExplain(settings.configPath);
  const integration = findIntegration(loaded, integrationId);
  const bytes = await readInputFile(ctx.cwd, values.payload, 'payload');
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new CliError(`payload ${values.payload} is not JSON: ${firstLine(error)}`);
  }
  const { client } = await connectDocgenClient(settings, loaded.config.service);
  const documents = await mapDelivery(
    integration,
    { body, headers, query, receivedAt: new Date().toISOString() },
    createTemplateCache(client),
  );
  ctx.stdout.write(`${JSON.stringify(documents, null, 2)}\n`);
  return 0;
};
