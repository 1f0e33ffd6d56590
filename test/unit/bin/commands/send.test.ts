import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contentTypeOf } from '../../../../bin/commands/ops-args';
import { type FakeService, sendJson, startFakeService } from '../../../helpers/fake-service';
import { runCli } from '../../../helpers/run-cli';

const root = join(__dirname, '../../../..');

describe('docrelay send', () => {
  it.each([
    ['order.json', 'application/json'],
    ['envelope.XML', 'application/xml'],
    ['note.txt', 'text/plain'],
    ['sms.form', 'application/x-www-form-urlencoded'],
    ['sms.URLENCODED', 'application/x-www-form-urlencoded'],
    ['payload', 'application/json'],
    ['dir.v2/payload', 'application/json'],
  ])('posts %s as %s', (file, type) => {
    expect(contentTypeOf(file)).toBe(type);
  });
});

describe('docrelay send: what it prints', () => {
  let hooks: FakeService;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'docrelay-send-'));
    await writeFile(join(dir, 'secrets.json'), JSON.stringify({ 'docrelay/github-webhook': 'unit-secret' }));
    hooks = await startFakeService();
  });
  afterAll(async () => {
    await hooks.close();
    await rm(dir, { recursive: true, force: true });
  });

  const send = () =>
    runCli(
      [
        'send',
        'github-releases',
        '--payload',
        'config/samples/github-release-published.json',
        '--url',
        hooks.url,
      ],
      {
        cwd: root,
        env: { DOCRELAY_DATA_DIR: join(dir, 'data'), DOCRELAY_SECRETS_FILE: join(dir, 'secrets.json') },
      },
    );

  it.each([
    [202, 'Accepted', { deliveryId: 'd-1', jobs: [{ jobId: 'j-1', rule: 'release-notes' }] }],
    [200, 'OK', { deliveryId: 'd-1', jobs: [{ jobId: 'j-1', rule: 'release-notes' }], duplicate: true }],
    [200, 'OK', { deliveryId: 'd-2', jobs: [] }],
  ])(
    'prints the status line (%i %s) on stderr and only the answer JSON on stdout',
    async (status, text, body) => {
      hooks.handle((_req, res) => sendJson(res, status, body));
      const result = await send();
      expect(result.code).toBe(0);
      expect(result.stderr).toBe(`${status} ${text}\n`);
      expect(JSON.parse(result.stdout)).toEqual(body);
    },
  );
});
