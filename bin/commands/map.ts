/**
 * `docrelay map <integrationId> --payload <file> [--header name:value]... [--query k=v]... [--offline]`: prints
 * the documents a payload would become, as JSON. Reads templates (with --offline, those of an in-process
 * emulator), creates nothing.
 */
import { readLocalSettings } from '../../functions/commons/env';
import type { DocgenClient } from '../../functions/docgen/client';
import { MappingError } from '../../functions/mapping/errors';
import { mapDelivery } from '../../functions/mapping/mapper';
import { createTemplateCache } from '../../functions/mapping/template-cache';
import { connectDocgenClient } from '../../local/service-connection';
import { startOfflineService } from './offline-service';
import {
  findIntegration,
  firstLine,
  loadConfigOrExplain,
  parseHeaderOptions,
  parseQueryOptions,
  readInputFile,
} from './ops-args';
import { CliError, type CommandContext } from './types';

const USAGE =
  'usage: docrelay map <integrationId> --payload <file> [--header name:value]... [--query key=value]... [--offline]';

/** What `docrelay map` takes besides the integration. */
export interface MapOptions {
  readonly payload: string;
  readonly header?: string[];
  readonly query?: string[];
  readonly offline?: boolean;
  readonly templates?: string;
}

/** Maps the payload file with the integration's rules and prints `[ { rule, templateId, templateFileId, data } ]`. */
export async function map(ctx: CommandContext, integrationId: string, values: MapOptions): Promise<number> {
  if (values.templates !== undefined && values.offline !== true) {
    throw new CliError(`--templates is for --offline (${USAGE})`, 2);
  }
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
  const offline = values.offline === true ? await startOfflineService(ctx.cwd, values.templates) : undefined;
  try {
    const connected =
      offline === undefined ? await connectDocgenClient(settings, loaded.config.service) : undefined;
    const client = offline?.client ?? (connected?.client as DocgenClient);
    let documents: Awaited<ReturnType<typeof mapDelivery>>;
    try {
      documents = await mapDelivery(
        integration,
        { body, headers, query, receivedAt: new Date().toISOString() },
        createTemplateCache(client),
      );
    } catch (error) {
      // No stack and no emulator: the config's service.baseUrl (often the sample's placeholder) was tried.
      if (connected?.connection.source === 'config' && !(error instanceof MappingError)) {
        throw new CliError(
          `cannot read templates from ${connected.connection.baseUrl} (service.baseUrl; no local stack or emulator runs for ${settings.dataDir}): ${firstLine(error)}; start npm start, or map with --offline`,
        );
      }
      throw error;
    }
    ctx.stdout.write(`${JSON.stringify(documents, null, 2)}\n`);
    return 0;
  } finally {
    await offline?.stop();
  }
}
