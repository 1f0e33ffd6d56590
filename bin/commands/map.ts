/**
 * `docrelay map <integrationId> --payload <file>`: prints the documents a payload would become, as JSON. The
 * payload is decoded as the ingest decodes a webhook body (functions/core/body.ts), by its content type; it
 * reads templates (with --offline, an in-process emulator's) and creates nothing.
 */
import { readLocalSettings } from '../../functions/commons/env';

import { type BodyType, bodyType, decodeBody } from '../../functions/core/body';
import { DeliveryRefusedError } from '../../functions/core/errors';
import type { DocgenClient } from '../../functions/docgen/client';
import { MappingError } from '../../functions/mapping/errors';
import { mapDelivery } from '../../functions/mapping/mapper';
import { createTemplateCache } from '../../functions/mapping/template-cache';
import { senderScheme, signDelivery } from '../../functions/senders';
import type { VerifyConfig } from '../../functions/senders/types';
import { connectDocgenClient } from '../../local/service-connection';
import { startOfflineService } from './offline-service';
import {
  contentTypeOf,
  findIntegration,
  firstLine,
  loadConfigOrExplain,
  parseHeaderOptions,
  parseQueryOptions,
  readInputFile,
} from './ops-args';
import { CliError, type CommandContext } from './types';

const USAGE =
  'usage: docrelay map <integrationId> --payload <file> [--content-type <type>] [--header name:value]... [--query key=value]... [--offline]';

/** What `docrelay map` takes besides the integration. */
export interface MapOptions {
  readonly payload: string;
  /** The payload's media type; else a Content-Type `--header`, the sender's own, or the file's extension. */
  readonly contentType?: string;
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
  // The Content-Type `send` would post (and so the ingest would read), which the expressions see as well.
  const contentType =
    headers['content-type'] ??
    values.contentType ??
    senderContentType(integration.config.verify, bytes) ??
    contentTypeOf(values.payload);
  const type = payloadType(integration.config.verify, contentType);
  let body: unknown;
  try {
    ({ body } = decodeBody(bytes, type));
  } catch (error) {
    if (!(error instanceof DeliveryRefusedError)) throw error;
    throw new CliError(`payload ${values.payload} cannot be read as ${type.mediaType}: ${error.message}`);
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
        {
          body,
          contentType: type.mediaType,
          headers: { 'content-type': contentType, ...headers },
          query,
          receivedAt: new Date().toISOString(),
        },
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

/**
 * The body type the ingest would decode: the media type the integration's scheme always reads (SNS posts
 * JSON as text/plain), else the content type's. One the ingest refuses (415) is a usage error.
 */
function payloadType(verify: VerifyConfig | undefined, contentType: string): BodyType {
  const forced = verify === undefined ? undefined : senderScheme(verify.scheme)?.bodyMediaType;
  try {
    return bodyType(forced ?? contentType);
  } catch (error) {
    if (!(error instanceof DeliveryRefusedError)) throw error;
    throw new CliError(`--content-type ${contentType}: ${error.message} (${USAGE})`, 2);
  }
}

/**
 * The Content-Type a scheme's sender posts whatever the file's extension, when its signer sets one (Twilio
 * posts forms): what `send` posts. Only the signer knows it, so it is asked with a throwaway key and its
 * signature dropped; a signer that needs a key of a particular form says nothing, and the extension decides.
 */
function senderContentType(verify: VerifyConfig | undefined, rawBody: Buffer): string | undefined {
  if (verify === undefined) return undefined;
  try {
    const headers = signDelivery({
      config: verify,
      secrets: ['docrelay-map-throwaway-key'],
      rawBody,
      now: new Date(),
      url: 'http://127.0.0.1/v1/hooks/map',
      method: 'POST',
    });
    return headers['content-type'];
  } catch {
    return undefined;
  }
}
