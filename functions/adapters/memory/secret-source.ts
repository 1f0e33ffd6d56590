/** Secrets given in code, for unit tests and tools. */
import { SecretNotFoundError, type SecretSource } from '../../ports/secret-source';

/** Secret values from a map. */
export class StaticSecretSource implements SecretSource {
  /** Names whose cache was dropped, in order. */
  readonly refreshed: string[] = [];

  constructor(private readonly values: Readonly<Record<string, string>>) {}

  async get(name: string): Promise<string> {
    const value = Object.hasOwn(this.values, name) ? this.values[name] : undefined;
    if (value === undefined) throw new SecretNotFoundError(name, 'the static secrets');
    return value;
  }

  refresh(name: string): void {
    this.refreshed.push(name);
  }
}
