import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { main } from '../../../../bin/docrelay';
import {
  type FakeService,
  sendJson,
  startFakeService,
  template,
  templateFile,
} from '../../../helpers/fake-service';

const KEY = 'cli-test-key-123456';

let service: FakeService;
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'docrelay-cli-'));
  service = await startFakeService((req, res) => {
    if (req.headers['x-api-key'] !== KEY) return sendJson(res, 401, { message: 'bad key' });
    if (req.url === '/v1.0/workspace')
      return sendJson(res, 200, { value: [{ id: 'ws-42', displayName: 'Acme Ltd' }] });
    if (req.url === '/v1.0/templates') {
      const { properties: _p, ...listed } = template('9001');
      return sendJson(res, 200, { value: [listed], '@odata.nextLink': '/v1.0/templates?page=2' });
    }
    if (req.url === '/v1.0/templates?page=2') {
      const { properties: _p, ...listed } = pack;
      return sendJson(res, 200, { value: [listed] });
    }
    if (req.url === '/v1.0/templates/9002') return sendJson(res, 200, pack);
    return sendJson(res, 404, { message: 'Template not found' });
  });
});

afterEach(async () => {
  await service.close();
  await rm(dir, { recursive: true, force: true });
});

const pack = {
  ...template('9002', [templateFile('f-notes', 'notes.docx'), templateFile('f-sum', 'summary.txt')]),
  name: 'Release pack',
  properties: [
    { type: 'text', name: 'Version', label: 'Version number' },
    { type: 'select', name: 'Channel', allowedValues: ['stable', 'beta'], defaultValue: 'stable' },
    { type: 'hologram', name: 'Odd one' },
  ],
};

async function cli(argv: string[], env: Record<string, string> = {}) {
  let out = '';
  let err = '';
  const sink = (append: (s: string) => void) =>
    new Writable({
      write(chunk, _enc, cb) {
        append(String(chunk));
        cb();
      },
    });
  const code = await main(argv, {
    stdout: sink((s) => {
      out += s;
    }),
    stderr: sink((s) => {
      err += s;
    }),
    env: { DOCGEN_BASE_URL: service.url, DOCGEN_API_KEY: KEY, DOCRELAY_DATA_DIR: dir, ...env },
    cwd: dir,
  });
  return { code, out, err };
}

describe('docrelay workspace', () => {
  it('prints the workspace id and name', async () => {
    const { code, out } = await cli(['workspace']);
    expect(code).toBe(0);
    expect(out).toContain('ws-42');
    expect(out).toContain('Acme Ltd');
  });

  it('prints JSON with --json', async () => {
    const { code, out } = await cli(['workspace', '--json']);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toEqual({ id: 'ws-42', displayName: 'Acme Ltd' });
  });

  it('refuses an unknown option with exit code 2', async () => {
    const { code, err } = await cli(['workspace', '--yaml']);
    expect(code).toBe(2);
    expect(err.trim().split('\n')).toHaveLength(1);
  });

  it('fails in one line, without the key, when the service refuses the key', async () => {
    const { code, err } = await cli(['workspace'], { DOCGEN_API_KEY: 'wrong-key-999999' });
    expect(code).toBe(1);
    expect(err).toMatch(/^docrelay workspace: .*401/);
    expect(err).not.toContain('wrong-key-999999');
    expect(err.trim().split('\n')).toHaveLength(1);
  });

  it('tells the user how to get a service when none is configured or running', async () => {
    const { code, err } = await cli(['workspace'], { DOCGEN_BASE_URL: '' });
    expect(code).toBe(1);
    expect(err).toContain('npx docrelay emulator');
  });
});

describe('docrelay templates', () => {
  it('lists every page as a table of id, name, created and file count', async () => {
    const { code, out } = await cli(['templates', 'list']);
    expect(code).toBe(0);
    const lines = out.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+CREATED\s+FILES$/);
    expect(lines[1]).toMatch(/^9001\s+Template 9001\s+2024-01-01T00:00:00Z\s+1$/);
    expect(lines[2]).toMatch(/^9002\s+Release pack\s+2024-01-01T00:00:00Z\s+2$/);
  });

  it('lists as a JSON array with --json', async () => {
    const { out } = await cli(['templates', 'list', '--json']);
    expect((JSON.parse(out) as Array<{ id: string }>).map((t) => t.id)).toEqual(['9001', '9002']);
  });

  it('shows files with used properties and properties with type, label, allowed values and default', async () => {
    const { code, out } = await cli(['templates', 'show', '9002']);
    expect(code).toBe(0);
    expect(out).toContain('Release pack');
    expect(out).toMatch(/f-notes\s+notes\.docx/);
    expect(out).toMatch(/f-sum\s+summary\.txt/);
    expect(out).toContain('Customer (required)');
    expect(out).toMatch(/Version\s+text\s+Version number/);
    expect(out).toMatch(/Channel\s+select\s+stable \| beta\s+stable/);
    expect(out).toMatch(/Odd one\s+hologram/);
  });

  it('shows the template as JSON with --json', async () => {
    const { out } = await cli(['templates', 'show', '9002', '--json']);
    expect(JSON.parse(out)).toEqual(pack);
  });

  it.each([
    [['templates'], /^error: missing command for docrelay templates: list, show \(add --help for usage\)\n$/],
    [['templates', 'show'], /^error: missing required argument 'templateId'/],
    [['templates', 'frob'], /^error: unknown command 'frob'/],
    [['templates', 'list', '--nope'], /^error: unknown option '--nope'/],
  ])('refuses %j with exit code 2', async (argv, message) => {
    const { code, err } = await cli(argv);
    expect(code).toBe(2);
    expect(err).toMatch(message);
  });

  it('reports an unknown template in one line', async () => {
    const { code, err } = await cli(['templates', 'show', 'nope']);
    expect(code).toBe(1);
    expect(err).toMatch(
      /^docrelay templates: getTemplate: template nope not found \(HTTP 404\): Template not found\n$/,
    );
  });
});

describe("without a local stack or DOCGEN_BASE_URL: the config's service, as map and check use it", () => {
  /** Only the config names the service: its baseUrl, and the name of the key's secret in the secrets file. */
  async function configuredCli(argv: string[]) {
    await writeFile(
      join(dir, 'docrelay.yaml'),
      `service: { baseUrl: "${service.url}", apiKeySecret: acme/docgen-key }
integrations:
  - id: notes
    verify: { scheme: none, allowUnsigned: true }
    documents:
      - { name: note, template: { id: "9001" }, data: { Customer: "name" } }
`,
    );
    await writeFile(join(dir, 'secrets.json'), JSON.stringify({ 'acme/docgen-key': KEY }));
    return cli(argv, {
      DOCGEN_BASE_URL: '',
      DOCGEN_API_KEY: '',
      DOCRELAY_CONFIG: join(dir, 'docrelay.yaml'),
      DOCRELAY_SECRETS_FILE: join(dir, 'secrets.json'),
    });
  }

  it('workspace asks service.baseUrl with the key named by service.apiKeySecret', async () => {
    const { code, out, err } = await configuredCli(['workspace']);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain('ws-42');
  });

  it('templates list and show ask it too', async () => {
    const listed = await configuredCli(['templates', 'list', '--json']);
    expect(listed.err).toBe('');
    expect((JSON.parse(listed.out) as Array<{ id: string }>).map((t) => t.id)).toEqual(['9001', '9002']);
    const shown = await configuredCli(['templates', 'show', '9002', '--json']);
    expect(JSON.parse(shown.out)).toEqual(pack);
  });

  it('says which service it tried when service.baseUrl cannot be reached', async () => {
    const url = service.url;
    await service.close();
    const { code, err } = await configuredCli(['templates', 'list']);
    service = await startFakeService();
    expect(code).toBe(1);
    expect(err.trim().split('\n')).toHaveLength(1);
    expect(err).toContain(`${url} (service.baseUrl; no local stack or emulator runs for ${dir})`);
  });
});
