/** `docrelay init`: a valid stanza per scheme, written with the secret and a sample; refusals change nothing. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { integrationStanza, secretNameFor } from '../../../bin/commands/init';
import { main } from '../../../bin/docrelay';
import { loadConfigFile, parseConfig } from '../../../functions/config/load';
import { SENDER_SCHEMES } from '../../../functions/senders';

const root = join(__dirname, '../../..');
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'docrelay-init-'));
  await writeFile(join(dir, 'docrelay.yaml'), await readFile(join(root, 'config/docrelay.yaml')));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function cli(argv: string[]) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (chunk: Buffer) => out.push(chunk));
  stderr.on('data', (chunk: Buffer) => err.push(chunk));
  const env = { DOCRELAY_CONFIG: join(dir, 'docrelay.yaml'), DOCRELAY_DATA_DIR: join(dir, 'data') };
  const code = await main(argv, { stdout, stderr, cwd: dir, env });
  return { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}

describe('integrationStanza', () => {
  it.each(SENDER_SCHEMES.map((scheme) => [scheme]))('makes a valid integration for scheme %s', (scheme) => {
    const stanza = integrationStanza('new-hooks', scheme);
    const text = JSON.stringify({
      service: { baseUrl: 'https://docs.example.com', apiKeySecret: 'docrelay/service-api-key' },
      integrations: [stanza],
    });
    const loaded = parseConfig(text, 'init.json');
    expect(loaded.integrations.get('new-hooks')?.config.verify?.scheme).toBe(scheme);
  });
});

describe('docrelay init', () => {
  it('adds the stanza (keeping the comments), creates the secret and a sample, and prints the next commands', async () => {
    const result = await cli(['init', 'acme-forms', '--scheme', 'hmac-sha256']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const text = await readFile(join(dir, 'docrelay.yaml'), 'utf8');
    expect(text).toContain('# --- GitHub: a release pack for every published release');
    const loaded = await loadConfigFile(join(dir, 'docrelay.yaml'));
    expect(loaded.integrations.get('acme-forms')?.config.verify).toMatchObject({
      scheme: 'hmac-sha256',
      secret: secretNameFor('acme-forms'),
    });
    const secrets = JSON.parse(await readFile(join(dir, 'data', 'secrets.json'), 'utf8')) as Record<
      string,
      string
    >;
    expect(secrets[secretNameFor('acme-forms')]).toMatch(/^\S{20,}$/);
    const sample = JSON.parse(await readFile(join(dir, 'samples', 'acme-forms.json'), 'utf8')) as object;
    expect(sample).toHaveProperty('title');
    expect(result.stdout).toContain('npx docrelay send acme-forms --payload samples/acme-forms.json --wait');
    // The secret's value is never printed.
    expect(result.stdout).not.toContain(secrets[secretNameFor('acme-forms')]);
  });

  it('gives a Standard Webhooks integration a whsec_ secret', async () => {
    expect((await cli(['init', 'svc', '--scheme', 'standard-webhooks'])).code).toBe(0);
    const secrets = JSON.parse(await readFile(join(dir, 'data', 'secrets.json'), 'utf8')) as Record<
      string,
      string
    >;
    expect(secrets[secretNameFor('svc')]).toMatch(/^whsec_/);
  });

  it.each([
    [['init', 'github-releases', '--scheme', 'github'], 1, /already has an integration "github-releases"/],
    [
      ['init', 'x', '--scheme', 'carrier-pigeon'],
      2,
      /unknown scheme "carrier-pigeon": one of github, stripe/,
    ],
    [
      ['init', 'bad id!', '--scheme', 'github'],
      1,
      /the new integration would not be valid: .*integration id/,
    ],
    [['init', 'x'], 2, /required option '--scheme <scheme>' not specified/],
  ])('%j is refused and changes nothing', async (argv, code, message) => {
    const before = await readFile(join(dir, 'docrelay.yaml'), 'utf8');
    const result = await cli(argv);
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message);
    expect(await readFile(join(dir, 'docrelay.yaml'), 'utf8')).toBe(before);
  });
});
