/** Secrets locally: a JSON file of name to value, read once and cached (the SecretSource port). */
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { DocrelayError } from '../../commons/errors';
import { SecretNotFoundError, type SecretSource } from '../../ports/secret-source';

/** Secrets from a JSON file `{ "name": "value" }` (`DOCRELAY_SECRETS_FILE`), with overrides by name. */
export class FileSecretSource implements SecretSource {
  private cache: Promise<Record<string, string>> | undefined;

  constructor(
    private readonly file: string,
    private readonly overrides: Readonly<Record<string, string>> = {},
  ) {}

  async get(name: string): Promise<string> {
    const override = this.overrides[name];
    if (override !== undefined) return override;
    this.cache ??= readSecretsFile(this.file);
    const values = await this.cache.catch((error: unknown) => {
      this.cache = undefined;
      throw error;
    });
    const value = Object.hasOwn(values, name) ? values[name] : undefined;
    if (typeof value !== 'string' || value === '') throw new SecretNotFoundError(name, this.file);
    return value;
  }

  refresh(_name: string): void {
    this.cache = undefined;
  }

  /** Stores a value in the file (written whole, then renamed over it, readable by its owner only). */
  async put(name: string, value: string): Promise<void> {
    const values = { ...(await readSecretsFile(this.file)), [name]: value };
    const temporary = `${this.file}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temporary, `${JSON.stringify(values, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, this.file);
    this.cache = undefined;
  }
}

async function readSecretsFile(file: string): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new DocrelayError('SECRETS_FILE_UNREADABLE', `cannot read the secrets file ${file}`, {
      cause: error,
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // The parser's message can quote the file's text, which holds secret values: say only where.
    throw new DocrelayError('SECRETS_FILE_INVALID', `the secrets file ${file} is not valid JSON`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new DocrelayError(
      'SECRETS_FILE_INVALID',
      `the secrets file ${file} must hold a JSON object of name to value`,
    );
  }
  const values: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value === 'string') values[name] = value;
  }
  return values;
}
