import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readLocalSettings } from '../../../functions/commons/env';
import { DEFAULT_API_KEY_SECRET, resolveServiceConnection } from '../../../local/service-connection';
import { writeEndpoints } from '../../../local/state-files';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'docrelay-conn-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const settings = (env: Record<string, string> = {}) =>
  readLocalSettings({ DOCRELAY_DATA_DIR: 'data', ...env }, dir);

describe('resolveServiceConnection', () => {
  it('prefers DOCGEN_BASE_URL and DOCGEN_API_KEY', async () => {
    await writeEndpoints(join(dir, 'data'), { docgen: { baseUrl: 'http://127.0.0.1:4010' } });
    const connection = await resolveServiceConnection(
      settings({ DOCGEN_BASE_URL: 'http://127.0.0.1:5000', DOCGEN_API_KEY: 'env-key' }),
      { baseUrl: 'https://docs.example.com' },
    );
    expect(connection.source).toBe('env');
    expect(connection.baseUrl).toBe('http://127.0.0.1:5000');
    await expect(connection.apiKey.get()).resolves.toBe('env-key');
  });

  it('uses a running local stack or emulator before the configuration', async () => {
    await writeEndpoints(join(dir, 'data'), { docgen: { baseUrl: 'http://127.0.0.1:4010' } });
    const connection = await resolveServiceConnection(settings(), {
      baseUrl: 'https://docs.example.com',
      downloadOrigins: ['https://files.example.com'],
    });
    expect(connection).toMatchObject({
      source: 'local-stack',
      baseUrl: 'http://127.0.0.1:4010',
      downloadOrigins: ['https://files.example.com'],
    });
  });

  it('falls back to the configured base URL', async () => {
    const connection = await resolveServiceConnection(settings(), { baseUrl: 'https://docs.example.com' });
    expect(connection).toMatchObject({
      source: 'config',
      baseUrl: 'https://docs.example.com',
      downloadOrigins: [],
    });
  });

  it('says how to get a service when there is none', async () => {
    await expect(resolveServiceConnection(settings())).rejects.toThrow(
      /npm start.*docrelay emulator.*DOCGEN_BASE_URL/,
    );
  });

  it('reads the key from the secrets file and re-reads it on refresh (rotation)', async () => {
    const secretsFile = join(dir, 'secrets.json');
    await writeFile(secretsFile, JSON.stringify({ [DEFAULT_API_KEY_SECRET]: 'first' }));
    const connection = await resolveServiceConnection(
      settings({ DOCRELAY_SECRETS_FILE: secretsFile, DOCGEN_BASE_URL: 'http://127.0.0.1:1' }),
    );
    await expect(connection.apiKey.get()).resolves.toBe('first');
    await writeFile(secretsFile, JSON.stringify({ [DEFAULT_API_KEY_SECRET]: 'second' }));
    await expect(connection.apiKey.get()).resolves.toBe('first');
    await expect(connection.apiKey.refresh?.()).resolves.toBe('second');
    await expect(connection.apiKey.get()).resolves.toBe('second');
  });

  it('reads the secret the configuration names', async () => {
    const secretsFile = join(dir, 'secrets.json');
    await writeFile(secretsFile, JSON.stringify({ 'custom/key': 'custom-value' }));
    const connection = await resolveServiceConnection(settings({ DOCRELAY_SECRETS_FILE: secretsFile }), {
      baseUrl: 'https://docs.example.com',
      apiKeySecret: 'custom/key',
    });
    await expect(connection.apiKey.get()).resolves.toBe('custom-value');
  });
});
