/**
 * Asana's handshake through the local stack: refused until the operator opens a window with
 * `docrelay asana-handshake`, then the first X-Hook-Secret is kept and the window closes; a later handshake
 * from anyone else is refused, deliveries signed with the kept secret make jobs and forged ones do not.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { main } from '../../bin/docrelay';
import { FileSecretSource } from '../../functions/adapters/local/file-secret-source';
import { type SecurityStack, startSecurityStack } from './helpers/security-harness';

jest.setTimeout(60_000);

const yaml = `service: { baseUrl: https://docs.example.com }
integrations:
  - id: sec-asana
    verify: { scheme: asana, secret: sec/asana-hook }
    documents:
      - { name: note, template: { id: "9003" }, data: { Title: "'x'" } }
`;

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

let t: SecurityStack;

beforeAll(async () => {
  t = await startSecurityStack({ yaml });
  await new FileSecretSource(join(t.dataDir, 'secrets.json')).put('sec/asana-hook', 'pending');
});

afterAll(async () => {
  await t?.dispose();
});

const post = async (headers: Record<string, string>, body = Buffer.from('{"events":[]}')) => {
  const response = await fetch(`${t.url}/v1/hooks/sec-asana`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return {
    status: response.status,
    echo: response.headers.get('x-hook-secret'),
    text: await response.text(),
  };
};

const signed = (key: string, body: Buffer) => ({
  'x-hook-signature': createHmac('sha256', key).update(body).digest('hex'),
});

it('keeps the first X-Hook-Secret only inside the window the operator opened', async () => {
  const attacker = randomBytes(16).toString('hex');
  const asana = randomBytes(16).toString('hex');
  expect((await post({ 'x-hook-secret': attacker })).status).toBe(401);

  const stdout = new Capture();
  const code = await main(['asana-handshake', 'sec-asana', '--minutes', '5'], {
    stdout,
    stderr: new Capture(),
    cwd: resolve(__dirname, '../..'),
    env: { DOCRELAY_DATA_DIR: t.dataDir, DOCRELAY_CONFIG: join(t.dataDir, 'security.yaml') },
  });
  expect({ code, stdout: stdout.text }).toMatchObject({
    code: 0,
    stdout: expect.stringMatching(/^handshake window for sec-asana open until /),
  });

  expect(await post({ 'x-hook-secret': asana })).toMatchObject({ status: 200, echo: asana });
  // The window closed with the kept secret: another handshake is refused.
  expect((await post({ 'x-hook-secret': attacker })).status).toBe(401);

  const depth = await t.queueDepth();
  const body = Buffer.from('{"events":[{"action":"changed","resource":{"gid":"1"}}]}');
  expect((await post(signed(attacker, body), body)).status).toBe(401);
  expect((await post(signed(asana, body), body)).status).toBe(202);
  expect((await t.queueDepth()) - depth).toBe(1);
});
