/**
 * `docrelay check` refuses a generic hmac whose timestampHeader the signature does not cover (anyone could set
 * it, so its tolerance would check nothing), with the option's location, and passes it once signed.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { main } from '../../bin/docrelay';

const root = resolve(__dirname, '../..');

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'docrelay-check-hmac-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function check(signedContent: string) {
  const configPath = join(dir, `hmac-${signedContent === '' ? 'unsigned' : 'signed'}.yaml`);
  await writeFile(
    configPath,
    `service: { baseUrl: https://docs.example.com }
integrations:
  - id: acme
    verify:
      scheme: hmac
      secret: acme/webhook
      header: X-Acme-Signature
      timestampHeader: X-Acme-Timestamp${signedContent === '' ? '' : `\n      signedContent: "${signedContent}"`}
    documents:
      - { name: note, template: { id: "9003" }, data: { Title: "'x'" } }
`,
  );
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await main(['check', '--offline'], {
    stdout,
    stderr,
    cwd: root,
    env: { DOCRELAY_CONFIG: configPath, DOCRELAY_DATA_DIR: dir },
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

it('refuses timestampHeader outside signedContent, naming the option and its line', async () => {
  const result = await check('');
  expect(result.code).toBe(1);
  expect(`${result.stdout}${result.stderr}`).toMatch(
    /integrations\[0\]\.verify\.timestampHeader: signedContent does not include \{timestamp\}.*:8:/,
  );
});

it('passes once the timestamp is signed', async () => {
  const result = await check('{timestamp}.{body}');
  expect(result).toMatchObject({ code: 0, stdout: expect.stringMatching(/^OK /) });
});
