/**
 * Which Document Generation Service the service commands (workspace, templates, check, map, init) talk to:
 * DOCGEN_BASE_URL, else the running local stack's or emulator's, else the config's `service`
 * (local/service-connection.ts). The one place these commands read the config's service from.
 */
import { stat } from 'node:fs/promises';
import type { LocalSettings } from '../../functions/commons/env';
import type { DocgenClient } from '../../functions/docgen/client';
import { DocgenNotFoundError } from '../../functions/docgen/errors';
import { connectDocgenClient, type ServiceConnection } from '../../local/service-connection';
import { firstLine, loadConfigOrExplain } from './ops-args';
import { CliError } from './types';

/**
 * A client of the service, resolved as `check` and `map` resolve it. Without a config file only the
 * environment and a running stack or emulator can name the service; an invalid config fails with its first
 * problem, as `map` does.
 */
export async function connectConfiguredService(
  settings: LocalSettings,
): Promise<{ client: DocgenClient; connection: ServiceConnection }> {
  const present = await stat(settings.configPath).then(
    () => true,
    () => false,
  );
  const service = present ? (await loadConfigOrExplain(settings.configPath)).config.service : undefined;
  return connectDocgenClient(settings, service);
}

/**
 * Runs a call to the service; when the config's service.baseUrl was the one tried (often the sample's
 * placeholder), a failure says so on one line. An answer of the service (a template it does not have) is
 * passed on as it is.
 */
export async function callService<T>(
  connection: ServiceConnection,
  settings: Pick<LocalSettings, 'dataDir'>,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (connection.source !== 'config' || error instanceof DocgenNotFoundError) throw error;
    throw new CliError(
      `cannot use the service at ${connection.baseUrl} (service.baseUrl; no local stack or emulator runs for ${settings.dataDir}): ${firstLine(error)}`,
    );
  }
}
