/**
 * `docrelay check` and `docrelay map` against the service emulator over real HTTP: the shipped config passes,
 * a broken one fails with located messages, and every sample payload maps to data the service accepts.
 */
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { main } from '../../bin/docrelay';
import { DocgenClient, staticApiKey } from '../../functions/docgen/client';
import { type EmulatorHandle, startEmulator } from '../../local/emulator/server';

jest.setTimeout(30_000);

const root = resolve(__dirname, '../..');
const apiKey = 'cli-config-test-key';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

let emulator: EmulatorHandle;
let dataDir: string;

beforeAll(async () => {
  emulator = await startEmulator({ apiKey });
  dataDir = await mkdtemp(join(tmpdir(), 'docrelay-cli-config-'));
});

afterAll(async () => {
  await emulator.stop();
  await rm(dataDir, { recursive: true, force: true });
});

async function cli(argv: string[], env: Record<string, string> = {}) {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await main(argv, {
    stdout,
    stderr,
    cwd: root,
    env: { DOCGEN_BASE_URL: emulator.url, DOCGEN_API_KEY: apiKey, DOCRELAY_DATA_DIR: dataDir, ...env },
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe('docrelay check', () => {
  it('passes the shipped config against the emulator', async () => {
    const result = await cli(['check']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^OK config\/docrelay\.yaml: 5 integration\(s\), 6 rule\(s\), 3 template\(s\) checked/,
    );
    // The shipped config has no unsigned webhook URL (its events-only integration has no `verify`).
    expect(result.stderr).toBe('');
  });

  it('reports every template problem of a broken config at once, exit 1', async () => {
    const path = join(dataDir, 'broken.yaml');
    await writeFile(
      path,
      `service: { baseUrl: https://docs.example.com }
integrations:
  - id: shop
    verify: { scheme: github, secret: s }
    documents:
      - name: a
        template: { id: "9002" }
        data: { Release: "tag", Repository: "repo", Chanel: "'beta'" }
      - name: b
        template: { id: "9001" }
        data: { Customer Name: "c", Invoice Number: "n", Currency: "'gold'" }
      - name: c
        template: { id: "9876" }
        data: { Title: "t" }
`,
    );
    const result = await cli(['check'], { DOCRELAY_CONFIG: path });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines[0]).toMatch(/broken\.yaml: 4 problems$/);
    expect(lines.slice(1)).toEqual([
      expect.stringContaining(
        'integrations[0].documents[0].data.Chanel: template 9002 (Release pack) has no such property (did you mean "Channel"?)',
      ),
      expect.stringContaining(
        'integrations[0].documents[0].template: template 9002 (Release pack) has 2 files',
      ),
      expect.stringContaining(
        'integrations[0].documents[1].data.Currency: "gold" is not one of the allowed values',
      ),
      expect.stringContaining('integrations[0].documents[2].template.id: unknown template "9876"'),
    ]);
  });

  it('checks offline without the service', async () => {
    const result = await cli(['check', '--offline'], { DOCGEN_BASE_URL: 'http://127.0.0.1:9' });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('(offline: templates not checked)');
  });
});

describe('docrelay map', () => {
  const client = () => new DocgenClient({ baseUrl: emulator.url, apiKey: staticApiKey(apiKey) });

  it.each([
    ['github-releases', 'github-release-published.json', ['release-notes', 'changelog'], []],
    ['stripe-invoices', 'stripe-invoice-paid.json', ['invoice'], []],
    ['shopify-orders', 'shopify-order.json', ['invoice'], ['--header', 'X-Shopify-Topic: orders/paid']],
    ['internal-notes', 'internal-note.json', ['note'], []],
    ['order-events', 'order-paid-event.json', ['invoice'], []],
  ])('maps the %s sample to data the service accepts', async (integration, file, rules, extra) => {
    const result = await cli(['map', integration, '--payload', `config/samples/${file}`, ...extra]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const documents = JSON.parse(result.stdout) as Array<{
      rule: string;
      templateId: string;
      templateFileId?: string;
      data: Record<string, unknown>;
    }>;
    expect(documents.map((d) => d.rule)).toEqual(rules);
    for (const document of documents) {
      const created = await client().createDocument({
        templateId: document.templateId,
        templateFileId: document.templateFileId,
        data: document.data,
      });
      expect(created.files.length).toBeGreaterThan(0);
    }
  });

  it('names the known integrations for an unknown one', async () => {
    const result = await cli(['map', 'nope', '--payload', 'config/samples/internal-note.json']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'docrelay map: unknown integration "nope"; configured: github-releases, stripe-invoices, shopify-orders, internal-notes, order-events\n',
    );
  });

  it('prints a mapping error on one line', async () => {
    const payload = join(dataDir, 'bad-invoice.json');
    await writeFile(
      payload,
      JSON.stringify({ type: 'invoice.paid', data: { object: { number: 'X', amount_paid: 'lots' } } }),
    );
    const result = await cli(['map', 'stripe-invoices', '--payload', payload]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(
      '"Amount": data.object.amount_paid / 100: failed at character 25: The left side',
    );
    expect(result.stderr).toContain('"Customer Name": required by template file 90011');
  });
});

describe('docrelay map: any body the ingest takes', () => {
  let config: string;

  beforeAll(async () => {
    config = join(dataDir, 'bodies.yaml');
    await writeFile(
      config,
      `service: { baseUrl: https://docs.example.com }
integrations:
  - id: tw
    verify: { scheme: twilio, secret: docrelay/tw-webhook }
    documents:
      - name: note
        template: { id: "9003" }
        data: { Title: "'SMS from ' & From", Body: "Body" }
  - id: envelopes
    verify: { scheme: hmac-sha256, secret: docrelay/envelopes-webhook, header: x-signature }
    documents:
      - name: note
        template: { id: "9003" }
        data:
          Title: "DocuSignEnvelopeInformation.EnvelopeStatus.Subject"
          Body: "$contentType & ' ' & $headers.\`content-type\`"
  - id: texts
    verify: { scheme: hmac-sha256, secret: docrelay/texts-webhook, header: x-signature }
    documents:
      - name: note
        template: { id: "9003" }
        data: { Title: "$substringBefore($body, '\\n')", Body: "$contentType" }
`,
    );
    await writeFile(join(dataDir, 'note.txt'), 'First line\nsecond line\n');
    await writeFile(join(dataDir, 'fields.dat'), 'From=%2B15550001111&Body=hi');
    await writeFile(join(dataDir, 'broken.json'), '{"title": ');
  });

  const map = async (argv: string[]) => {
    const result = await cli(['map', ...argv], { DOCRELAY_CONFIG: config });
    return { ...result, documents: result.code === 0 ? (JSON.parse(result.stdout) as unknown[]) : [] };
  };

  it('maps the Twilio sample as the form its sender posts, though the file is .txt', async () => {
    const result = await map(['tw', '--payload', 'config/samples/twilio-sms-received.txt']);
    expect(result.stderr).toBe('');
    expect(result.documents).toEqual([
      {
        rule: 'note',
        templateId: '9003',
        templateFileId: '90031',
        data: { Title: 'SMS from +15558675310', Body: 'Please send the signed quote' },
      },
    ]);
  });

  it('maps an .xml file as XML, with $contentType and the Content-Type header the ingest would see', async () => {
    const result = await map(['envelopes', '--payload', 'config/samples/docusign-envelope-completed.xml']);
    expect(result.stderr).toBe('');
    expect(result.documents).toMatchObject([
      { data: { Title: 'Please sign: Service agreement', Body: 'application/xml application/xml' } },
    ]);
  });

  it('maps a .txt file as text ($body)', async () => {
    const result = await map(['texts', '--payload', join(dataDir, 'note.txt')]);
    expect(result.stderr).toBe('');
    expect(result.documents).toMatchObject([{ data: { Title: 'First line', Body: 'text/plain' } }]);
  });

  it('takes --content-type over the extension', async () => {
    const result = await map([
      'tw',
      '--payload',
      join(dataDir, 'fields.dat'),
      '--content-type',
      'application/x-www-form-urlencoded; charset=utf-8',
    ]);
    expect(result.stderr).toBe('');
    expect(result.documents).toMatchObject([{ data: { Title: 'SMS from +15550001111', Body: 'hi' } }]);
  });

  it.each([
    [
      ['--content-type', 'image/png'],
      2,
      /^docrelay map: --content-type image\/png: Send the body as application\/json/,
    ],
    [['--content-type', 'multipart/form-data'], 2, /multipart\/form-data is not supported yet/],
    [
      [],
      1,
      /^docrelay map: payload .*broken\.json cannot be read as application\/json: The body is not valid JSON\.\n$/,
    ],
  ])('refuses %j on one line', async (extra, code, message) => {
    const result = await map(['texts', '--payload', join(dataDir, 'broken.json'), ...extra]);
    expect(result.code).toBe(code);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(message);
  });
});

describe('docrelay init --template: the rule from the template the service has', () => {
  let dir: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    dir = await mkdtemp(join(dataDir, 'init-'));
    await copyFile(join(root, 'config/docrelay.yaml'), join(dir, 'docrelay.yaml'));
    env = { DOCRELAY_CONFIG: join(dir, 'docrelay.yaml'), DOCRELAY_DATA_DIR: join(dir, 'data') };
  });

  it.each([
    ['9001', undefined, ['Customer Name', 'Invoice Number']],
    ['9002', '90021', ['Release', 'Repository']],
    ['9003', undefined, ['Title']],
    ['9005', undefined, ['Order Id', 'Quantity']],
  ])(
    'template %s: every required property mapped to a placeholder; check passes and the sample maps',
    async (templateId, fileId, required) => {
      const added = await cli(['init', 'acme', '--scheme', 'hmac-sha256', '--template', templateId], env);
      expect(added.stderr).toBe('');
      expect(added.code).toBe(0);
      const checked = await cli(['check'], env);
      expect(checked.stderr).toBe('');
      expect(checked.code).toBe(0);
      const mapped = await cli(['map', 'acme', '--payload', join(dir, 'samples/acme.json')], env);
      expect(mapped.stderr).toBe('');
      const [document] = JSON.parse(mapped.stdout) as Array<{
        templateId: string;
        templateFileId: string;
        data: Record<string, unknown>;
      }>;
      expect(document?.templateId).toBe(templateId);
      if (fileId !== undefined) expect(document?.templateFileId).toBe(fileId);
      expect(Object.keys(document?.data ?? {}).sort()).toEqual([...required].sort());
      const client = new DocgenClient({ baseUrl: emulator.url, apiKey: staticApiKey(apiKey) });
      const created = await client.createDocument({
        templateId,
        templateFileId: document?.templateFileId,
        data: document?.data ?? {},
      });
      expect(created.files.length).toBeGreaterThan(0);
    },
  );

  it('refuses a template the service does not have on one line, writing nothing', async () => {
    const before = await readFile(join(dir, 'docrelay.yaml'), 'utf8');
    const result = await cli(['init', 'acme', '--scheme', 'hmac-sha256', '--template', '9876'], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `docrelay init: unknown template "9876" at ${emulator.url}: docrelay templates list shows the templates there\n`,
    );
    expect(await readFile(join(dir, 'docrelay.yaml'), 'utf8')).toBe(before);
    expect(await readdir(dir)).toEqual(['docrelay.yaml']);
  });
});
