/**
 * Where the CLI and the local stack find the Document Generation Service and its key: the environment
 * first (`DOCGEN_BASE_URL`, `DOCGEN_API_KEY`), then a running local stack or standalone emulator, then the
 * configuration the caller passes.
 */

import { FileSecretSource } from '../functions/adapters/local/file-secret-source';
import type { LocalSettings } from '../functions/commons/env';
import { type ApiKeyProvider, DocgenClient, type DocgenClientOptions } from '../functions/docgen/client';
import { readEndpoints, runningServiceUrl } from './state-files';

/** The name of the service key's secret when the configuration names none. */
export const DEFAULT_API_KEY_SECRET = 'docrelay/service-api-key';

/** The service settings of the configuration file, as far as the connection needs them. */
export interface ServiceSettings {
  readonly baseUrl?: string;
  readonly apiKeySecret?: string;
  readonly downloadOrigins?: string[];
}

/** How to reach the service, and where the base URL came from. */
export interface ServiceConnection {
  readonly baseUrl: string;
  readonly apiKey: ApiKeyProvider;
  readonly downloadOrigins: string[];
  readonly source: 'env' | 'local-stack' | 'config';
}

/** Resolves the service's base URL and key provider for local use (CLI, local stack, tests). */
export async function resolveServiceConnection(
  settings: LocalSettings,
  service: ServiceSettings = {},
): Promise<ServiceConnection> {
  const downloadOrigins = [...(service.downloadOrigins ?? [])];
  let baseUrl: string | undefined;
  let source: ServiceConnection['source'] = 'env';
  if (settings.docgenBaseUrl !== undefined) {
    baseUrl = settings.docgenBaseUrl;
  } else {
    const running = runningServiceUrl(await readEndpoints(settings.dataDir));
    if (typeof running === 'string' && running !== '') {
      baseUrl = running;
      source = 'local-stack';
    } else if (service.baseUrl !== undefined && service.baseUrl !== '') {
      baseUrl = service.baseUrl;
      source = 'config';
    }
  }
  if (baseUrl === undefined) {
    throw new Error(
      'no Document Generation Service to talk to: start the local stack (npm start) or the emulator ' +
        '(npx docrelay emulator), or set DOCGEN_BASE_URL',
    );
  }
  return { baseUrl, apiKey: apiKeyProvider(settings, service.apiKeySecret), downloadOrigins, source };
}

/** The key from `DOCGEN_API_KEY`, else from the secrets file, re-read on refresh. */
function apiKeyProvider(settings: LocalSettings, secretName = DEFAULT_API_KEY_SECRET): ApiKeyProvider {
  const fixed = settings.docgenApiKey;
  if (fixed !== undefined) return { get: async () => fixed };
  const secrets = new FileSecretSource(settings.secretsFile);
  return {
    get: () => secrets.get(secretName),
    refresh: () => {
      secrets.refresh(secretName);
      return secrets.get(secretName);
    },
  };
}

/** A client for the resolved service, with the connection it uses (for CLI commands and local tools). */
export async function connectDocgenClient(
  settings: LocalSettings,
  service?: ServiceSettings,
  options: Omit<Partial<DocgenClientOptions>, 'baseUrl' | 'apiKey' | 'downloadOrigins'> = {},
): Promise<{ client: DocgenClient; connection: ServiceConnection }> {
  const connection = await resolveServiceConnection(settings, service);
  const client = new DocgenClient({
    ...options,
    baseUrl: connection.baseUrl,
    apiKey: connection.apiKey,
    downloadOrigins: connection.downloadOrigins,
  });
  return { client, connection };
}
