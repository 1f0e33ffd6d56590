/** `docrelay init`: a valid stanza per scheme, written with the secret and a sample; refusals change nothing. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DEFAULT_TEMPLATE,
  integrationIdProblem,
  integrationStanza,
  ruleFromTemplate,
  samplePayload,
  secretNameFor,
} from '../../../bin/commands/init';
import { loadConfigFile, parseConfig } from '../../../functions/config/load';
import { SENDER_SCHEMES } from '../../../functions/senders';
import { runCli } from '../../helpers/run-cli';

const root = join(__dirname, '../../..');
const CLOSED_SERVICE = 'http://127.0.0.1:9';
const OFFLINE_NOTE = `note: could not read template 9003 from ${CLOSED_SERVICE} (`;
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'docrelay-init-'));
  await writeFile(join(dir, 'docrelay.yaml'), await readFile(join(root, 'config/docrelay.yaml')));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

// No service: a closed loopback port (the rule is then the offline one, and a note says so).
const cli = (argv: string[]) =>
  runCli(argv, {
    cwd: dir,
    env: {
      DOCRELAY_CONFIG: join(dir, 'docrelay.yaml'),
      DOCRELAY_DATA_DIR: join(dir, 'data'),
      DOCGEN_BASE_URL: CLOSED_SERVICE,
    },
  });

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

/** The text `after` has that `before` has not, when `after` is `before` with one piece of text inserted. */
function insertedText(before: string, after: string): { at: number; text: string } {
  let at = 0;
  while (at < before.length && before[at] === after[at]) at += 1;
  const text = after.slice(at, at + after.length - before.length);
  expect(after.slice(0, at) + after.slice(at + text.length)).toBe(before);
  return { at, text };
}

describe('docrelay init keeps the config as it is written', () => {
  it('inserts the stanza as text at the end of the integrations block; every other byte is unchanged', async () => {
    const before = await readFile(join(dir, 'docrelay.yaml'), 'utf8');
    expect((await cli(['init', 'my-hooks', '--scheme', 'hmac-sha256'])).code).toBe(0);
    const after = await readFile(join(dir, 'docrelay.yaml'), 'utf8');
    const { at, text } = insertedText(before, after);
    // The shipped config ends with its integrations block.
    expect(at).toBe(before.length);
    // Indented as the file's other integrations, and the new integration's whole stanza.
    expect(text).toMatch(/\n {2}- id: my-hooks\n {4}verify:\n {6}scheme: hmac-sha256\n/);
    for (const line of text.split('\n').filter((l) => l !== '')) expect(line).toMatch(/^ {2}/);
    const loaded = await loadConfigFile(join(dir, 'docrelay.yaml'));
    expect([...loaded.integrations.keys()].at(-1)).toBe('my-hooks');
  });

  it.each([
    [
      'four spaces, lists indented',
      `service:
    baseUrl: https://docs.example.com   # aligned
    apiKeySecret: docrelay/service-api-key
integrations:
    - id: first
      verify:
          scheme: token
          secret: docrelay/first
      documents:
          - { name: note, template: { id: "9003" }, data: { Title: "title" } }   # kept as written
# after the block
storage:
    keyPattern: "{integration}/{jobId}/{filename}"
`,
      /^\n {4}- id: second\n {6}verify:\n {10}scheme: token\n(.*\n)* {6}documents:\n {10}- name: document\n/,
    ],
    [
      'two spaces, lists not indented',
      `service: { baseUrl: https://docs.example.com }
integrations:
- id: first
  verify:
    scheme: token
    secret: docrelay/first
  documents:
  - { name: note, template: { id: "9003" }, data: { Title: "title" } }
# after the block
`,
      /^\n- id: second\n {2}verify:\n {4}scheme: token\n(.*\n)* {2}documents:\n {2}- name: document\n/,
    ],
  ])(
    "follows the file's own indentation (%s), inserting before what follows the block",
    async (_, before, stanza) => {
      await writeFile(join(dir, 'docrelay.yaml'), before);
      expect((await cli(['init', 'second', '--scheme', 'token'])).code).toBe(0);
      const { at, text } = insertedText(before, await readFile(join(dir, 'docrelay.yaml'), 'utf8'));
      expect(at).toBe(before.indexOf('# after the block'));
      expect(text).toMatch(stanza);
      const loaded = await loadConfigFile(join(dir, 'docrelay.yaml'));
      expect([...loaded.integrations.keys()]).toEqual(['first', 'second']);
    },
  );

  it.each([
    ['integrations:\n', 'integrations:\n  - id: second\n'],
    ['integrations: []   # none yet\n', 'integrations:    # none yet\n  - id: second\n'],
    ['# no integrations yet\n', '# no integrations yet\nintegrations:\n  - id: second\n'],
  ])('starts the list under %j', async (list, expected) => {
    const service = 'service:\n  baseUrl: https://docs.example.com\n';
    await writeFile(join(dir, 'docrelay.yaml'), `${service}${list}`);
    expect((await cli(['init', 'second', '--scheme', 'token'])).code).toBe(0);
    const after = await readFile(join(dir, 'docrelay.yaml'), 'utf8');
    expect(after.startsWith(`${service}${expected}`)).toBe(true);
    const loaded = await loadConfigFile(join(dir, 'docrelay.yaml'));
    expect([...loaded.integrations.keys()]).toEqual(['second']);
  });
});

describe('docrelay init', () => {
  it('adds the stanza (keeping the comments), creates the secret and a sample, and prints the next commands', async () => {
    const result = await cli(['init', 'acme-forms', '--scheme', 'hmac-sha256']);
    expect(result.code).toBe(0);
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
      2,
      /^docrelay init: "bad id!": an integration id is 1-64 letters, digits, "-" or "_", starting with a letter or digit\n$/,
    ],
    [
      ['init', '_under-first', '--scheme', 'github'],
      2,
      /^docrelay init: "_under-first": an integration id is 1-64 letters/,
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

describe('docrelay init without a service to read the template from', () => {
  it('writes the plain-note rule as before and says so on one line of stderr', async () => {
    const result = await cli(['init', 'acme-forms', '--scheme', 'hmac-sha256']);
    expect(result.code).toBe(0);
    expect(result.stderr.startsWith(OFFLINE_NOTE)).toBe(true);
    expect(result.stderr).toMatch(/\); the rule maps Title and Body, the plain note's properties: edit them/);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    const loaded = await loadConfigFile(join(dir, 'docrelay.yaml'));
    expect(loaded.integrations.get('acme-forms')?.config.documents[0]).toMatchObject({
      template: { id: '9003' },
      data: { Title: 'title', Body: 'body' },
    });
  });
});

describe('init: its help, its validation and the config schema agree', () => {
  const help = async () => (await cli(['init', '--help'])).stdout.replace(/\s+/g, ' ');

  it("describes the integration id as the schema's rule", async () => {
    const rule = integrationIdProblem('-')?.replace(/^an integration id is /, '');
    expect(rule).toBe('1-64 letters, digits, "-" or "_", starting with a letter or digit');
    expect(await help()).toContain(`the new integration id: ${rule}`);
  });

  it('names the template it uses by default', async () => {
    expect(DEFAULT_TEMPLATE).toBe('9003');
    expect(await help()).toContain("(default: 9003, the emulator's plain note)");
  });

  it.each([['Bad_Id'], ['UPPER-and_under'], ['9lives']])('takes %s, as the schema does', async (id) => {
    expect(integrationIdProblem(id)).toBeUndefined();
    const result = await cli(['init', id, '--scheme', 'token']);
    expect(result.code).toBe(0);
    expect((await loadConfigFile(join(dir, 'docrelay.yaml'))).integrations.has(id)).toBe(true);
  });
});

describe('ruleFromTemplate', () => {
  const template = {
    id: '42',
    name: 'Odd names',
    createdDateTime: '',
    files: [
      {
        id: '421',
        filename: 'odd.txt',
        mimeType: 'text/plain',
        size: 1,
        createdDateTime: '',
        lastModifiedDateTime: '',
        usedProperties: ['Id', 'Type', 'Customer Name', 'customer name', 'In', '1st', 'Note'].map((name) => ({
          name,
          required: name !== 'Note',
        })),
      },
    ],
    properties: [{ type: 'integer', name: 'Id' }],
  };

  it("maps each required property to its own field, never one of the sample's ids or a JSONata word", () => {
    const rule = ruleFromTemplate(template, 'acme');
    expect(rule.data).toEqual({
      Id: 'id_2',
      Type: 'type_2',
      'Customer Name': 'customer_name',
      'customer name': 'customer_name_2',
      In: 'in_value',
      '1st': 'field_1st',
    });
    const sample = samplePayload('acme', rule);
    expect(sample.id).toMatch(/^evt_/);
    expect(sample).toMatchObject({ type: 'sample', id_2: 1, type_2: 'Type from acme' });
    expect(rule.notes).toContainEqual('  optional: Note (not mapped; add them under data)');
  });
});
