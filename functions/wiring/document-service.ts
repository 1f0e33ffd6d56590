/** The service client and its template cache, as the worker and the CLI build them from the configuration. */
import type { LoadedConfig } from '../config/compile';
import { DocgenClient } from '../docgen/client';
import { createTemplateCache } from '../mapping/template-cache';
import type { TemplateSource } from '../ports/document-service';
import type { SecretSource } from '../ports/secret-source';

/** Options beyond the configuration. */
export interface DocumentServiceOptions {
  /** The service root. @default config.service.baseUrl */
  readonly baseUrl?: string;
  /** Retry budget of one service call, in milliseconds. @default 20_000 */
  readonly retryBudgetMs?: number;
}

/** The client (its key read from the secret source, refreshed on 401/403) and a cached template source. */
export function buildDocumentService(
  config: LoadedConfig,
  secrets: SecretSource,
  options: DocumentServiceOptions = {},
): { docgen: DocgenClient; templates: TemplateSource } {
  const service = config.config.service;
  const docgen = new DocgenClient({
    baseUrl: options.baseUrl ?? service.baseUrl,
    apiKey: {
      get: () => secrets.get(service.apiKeySecret),
      refresh: () => secrets.refresh(service.apiKeySecret),
    },
    downloadOrigins: service.downloadOrigins,
    timeoutMs: (service.timeoutSeconds ?? 30) * 1000,
    retry: { totalBudgetMs: options.retryBudgetMs ?? 20_000, maxAttempts: 4 },
  });
  return {
    docgen,
    templates: createTemplateCache({ getTemplate: (id) => docgen.getTemplate(id) }, { ttlMs: 60_000 }),
  };
}
