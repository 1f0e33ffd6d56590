/**
 * The dev loop tells the truth: `npm start` lists every config problem, the running stack picks up config
 * edits (a broken one keeps the running config and says why), mappings are checked against the running
 * emulator's templates as warnings, `map --offline` needs no stack, and `docrelay emulator` started beside a
 * stack leaves the stack's endpoints alone.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { runEmulator } from '../../bin/commands/emulator';
import { main } from '../../bin/docrelay';
import { readLocalSettings } from '../../functions/commons/env';
import { type LocalStack, startLocalStack } from '../../local/stack/local-stack';
import { readEndpoints } from '../../local/state-files';

jest.setTimeout(60_000);

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

const NOTES = `service: { baseUrl: https://docs.example.com, apiKeySecret: docrelay/service-api-key }
integrations:
  - id: notes
    verify: { scheme: standard-webhooks, secret: docrelay/notes-webhook }
    documents:
      - name: note
        template: { id: "9003" }
        data: { Title: "title", Body: "body", Titel: "title" }
`;

let dir: string;
let env: Record<string, string>;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'docrelay-dev-loop-'));
  env = { DOCRELAY_DATA_DIR: join(dir, 'data'), DOCRELAY_CONFIG: join(dir, 'docrelay.yaml'), PORT: '0' };
  await writeFile(join(dir, 'docrelay.yaml'), NOTES);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function cli(argv: string[], extra: Record<string, string> = {}) {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await main(argv, { stdout, stderr, cwd: dir, env: { ...env, ...extra } });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe('npm start with a broken config', () => {
  it('prints every problem, located, as check does, and exits 1', async () => {
    await writeFile(
      join(dir, 'docrelay.yaml'),
      `service: { baseUrl: https://docs.example.com }
integrations:
  - id: a
    verify: { scheme: carrier-pigeon }
    documents: []
  - id: a
    documents: []
`,
    );
    const result = await cli(['dev']);
    expect(result.code).toBe(1);
    const lines = result.stderr.trimEnd().split('\n');
    const count = Number(/: (\d+) problems$/.exec(lines[0] ?? '')?.[1]);
    expect(count).toBeGreaterThan(1);
    expect(lines.slice(1, 1 + count).every((line) => /^ {2}- .*docrelay\.yaml:\d+:\d+/.test(line))).toBe(
      true,
    );
    expect(lines.at(-1)).toMatch(/fix the config and start again/);
  });
});

describe('a running stack and its config', () => {
  let stack: LocalStack;
  const lines: string[] = [];

  beforeEach(async () => {
    lines.length = 0;
    stack = await startLocalStack({
      settings: readLocalSettings(env, dir),
      logLevel: 'SILENT',
      reconcileIntervalMs: 600_000,
      onLine: (line) => lines.push(line),
    });
  });
  afterEach(async () => {
    await stack.stop();
  });

  it('warns at start about a mapping the templates cannot take, with the located message', () => {
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^warning: integrations\[0\]\.documents\[0\]\.data\.Titel: template 9003 \(Plain note\) has no such property/,
      ),
    );
  });

  it('picks up a new integration (docrelay init), and keeps the running config when an edit is broken', async () => {
    const added = await cli(['init', 'forms', '--scheme', 'hmac-sha256']);
    expect(added.code).toBe(0);
    const reloaded = await stack.reloadConfig();
    expect(reloaded.reloaded).toBe(true);
    expect(lines).toContainEqual(
      expect.stringMatching(/^config reloaded from .*: 2 integration\(s\), 2 rule\(s\)$/),
    );
    expect([...stack.config.integrations.keys()]).toEqual(['notes', 'forms']);
    const sent = await cli(['send', 'forms', '--payload', 'samples/forms.json', '--wait']);
    expect(sent.stderr).toMatch(/job \S+ stored: /);
    expect(sent).toMatchObject({ code: 0 });

    await writeFile(
      join(dir, 'docrelay.yaml'),
      `${await readFile(join(dir, 'docrelay.yaml'), 'utf8')}  - id: [\n`,
    );
    const broken = await stack.reloadConfig();
    expect(broken).toMatchObject({ reloaded: false });
    expect(lines).toContainEqual(expect.stringMatching(/^config not reloaded, the running config stays/));
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}- .*docrelay\.yaml:\d+:\d+/));
    expect([...stack.config.integrations.keys()]).toEqual(['notes', 'forms']);
    // The running stack still knows the integration (unsigned: 401, not 404), though the file is broken.
    const unsigned = await fetch(`${stack.url}/v1/hooks/forms`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(unsigned.status).toBe(401);
  });

  it('keeps its endpoints while a standalone emulator runs beside it and after it stops', async () => {
    const before = await readEndpoints(env.DOCRELAY_DATA_DIR as string);
    const stdout = new Capture();
    const controller = new AbortController();
    const running = runEmulator(
      { stdout, stderr: new Capture(), env, cwd: dir },
      { port: 0, host: '127.0.0.1' },
      controller.signal,
    );
    try {
      for (let i = 0; i < 1500 && !stdout.text.includes('\n'); i++) {
        await new Promise((done) => setTimeout(done, 20));
      }
      expect(stdout.text).toMatch(/ready at http:\/\/127\.0\.0\.1:\d+/);
      expect(stdout.text).toContain('the CLI keeps using that one');
      const during = await readEndpoints(env.DOCRELAY_DATA_DIR as string);
      expect(during?.docgen).toEqual(before?.docgen);
      expect((await cli(['templates', 'list', '--json'])).code).toBe(0);
    } finally {
      // Stopped on failure too: a server left listening keeps Jest from exiting.
      controller.abort();
    }
    await expect(running).resolves.toBe(0);
    const after = await readEndpoints(env.DOCRELAY_DATA_DIR as string);
    expect(after?.docgen).toEqual(before?.docgen);
    expect(after?.emulator).toBeUndefined();
    const workspace = await cli(['workspace']);
    expect(workspace.code).toBe(0);
  });
});

describe('without a stack', () => {
  it('map --offline maps against the emulator templates in-process', async () => {
    await writeFile(join(dir, 'docrelay.yaml'), NOTES.replace(', Titel: "title"', ''));
    await writeFile(join(dir, 'note.json'), JSON.stringify({ title: 'Hi', body: 'there' }));
    const result = await cli(['map', 'notes', '--payload', 'note.json', '--offline']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([
      expect.objectContaining({
        rule: 'note',
        templateId: '9003',
        data: expect.objectContaining({ Title: 'Hi' }),
      }),
    ]);
  });

  it('map and check without a stack or --offline say so, and name --offline', async () => {
    // A closed loopback port stands for the sample's placeholder service.
    await writeFile(
      join(dir, 'docrelay.yaml'),
      NOTES.replace('https://docs.example.com', 'http://127.0.0.1:9'),
    );
    await writeFile(join(dir, 'note.json'), '{}');
    const mapped = await cli(['map', 'notes', '--payload', 'note.json']);
    expect(mapped.code).toBe(1);
    expect(mapped.stderr).toMatch(/no local stack or emulator runs for .*map with --offline/);
    const checked = await cli(['check']);
    expect(checked.code).toBe(1);
    expect(checked.stderr).toMatch(/no local stack or emulator runs for .*check --offline skips the service/);
  });

  it('map --offline --templates reads the given folder', async () => {
    await writeFile(join(dir, 'note.json'), '{}');
    const result = await cli([
      'map',
      'notes',
      '--payload',
      'note.json',
      '--offline',
      '--templates',
      'missing',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/cannot load the templates of missing/);
  });
});
