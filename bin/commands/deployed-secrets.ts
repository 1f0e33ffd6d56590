/**
 * How the CLI names a deployed stack's secrets: the stack reads every config secret as
 * `<SecretPrefix><name in the config>` (its `SecretPrefix` output; `(none)` when the secrets are shared).
 */
import type { SecretSource } from '../../functions/ports/secret-source';

/** The prefix a deployed stack puts before the config's secret names ('' for a stack that shares them). */
export function secretPrefixOf(outputs: Readonly<Record<string, string>>): string {
  const prefix = outputs.SecretPrefix;
  return prefix === undefined || prefix === '(none)' ? '' : prefix;
}

/** A source that reads the config's secret names as the deployed stack does, with its prefix. */
export function prefixedSecrets(source: SecretSource, prefix: string): SecretSource {
  if (prefix === '') return source;
  return {
    get: (name) => source.get(`${prefix}${name}`),
    refresh: (name) => source.refresh(`${prefix}${name}`),
  };
}
