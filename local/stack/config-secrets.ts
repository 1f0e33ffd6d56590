/** The development secrets a configuration names, created in the local secrets file when it lacks them. */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { LoadedConfig } from '../../functions/config/compile';
import { ensureDevSecrets, writeJsonAtomic } from '../state-files';
import { LOCAL_SEALING_SECRET } from './workers';

/** Creates the development secrets the config names and the secrets file lacks, and says which. */
export async function ensureConfigSecrets(
  file: string,
  config: LoadedConfig,
  line: (text: string) => void,
): Promise<void> {
  const secretNames = new Set<string>([config.config.service.apiKeySecret, LOCAL_SEALING_SECRET]);
  const standardWebhooksSecrets = new Set<string>();
  for (const integration of config.config.integrations) {
    const secret = integration.verify?.secret;
    for (const name of secret === undefined ? [] : Array.isArray(secret) ? secret : [secret]) {
      secretNames.add(name);
      if (integration.verify?.scheme === 'standard-webhooks') standardWebhooksSecrets.add(name);
    }
  }
  const created = [
    ...(await ensureStandardWebhooksSecrets(file, standardWebhooksSecrets)),
    ...(await ensureDevSecrets(file, [...secretNames])),
  ];
  if (created.length > 0) line(`created development secrets in ${file}: ${created.join(', ')}`);
}

/**
 * Standard Webhooks secrets must be `whsec_<base64>`: a development value of another form (ensureDevSecrets
 * picks the form from the secret's name only) can be used by no sender and makes every delivery fail. Creates
 * the missing ones in that form, and replaces a `dev_` value this tool generated earlier. Returns their names.
 */
async function ensureStandardWebhooksSecrets(file: string, names: ReadonlySet<string>): Promise<string[]> {
  if (names.size === 0) return [];
  let values: Record<string, string> = {};
  try {
    values = JSON.parse(await readFile(file, 'utf8')) as Record<string, string>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const created = [...names].filter((name) => {
    const value = values[name];
    return typeof value !== 'string' || value === '' || value.startsWith('dev_');
  });
  if (created.length === 0) return [];
  for (const name of created) values[name] = `whsec_${randomBytes(24).toString('base64')}`;
  await writeJsonAtomic(file, values, 0o600);
  return created;
}
