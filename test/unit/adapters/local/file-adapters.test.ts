/** The local stack's stand-ins: secrets from a JSON file, events appended to a JSON-lines file. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileEventPublisher } from '../../../../functions/adapters/local/file-event-publisher';
import { FileSecretSource } from '../../../../functions/adapters/local/file-secret-source';
import { DocrelayError } from '../../../../functions/commons/errors';
import { EVENT_SOURCE } from '../../../../functions/ports/event-publisher';
import { SecretNotFoundError } from '../../../../functions/ports/secret-source';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'docrelay-local-adapters-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const failure = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );

describe('FileSecretSource', () => {
  it('reads values by name from the JSON file, and prefers an override', async () => {
    const file = join(dir, 'secrets.json');
    await writeFile(file, JSON.stringify({ 'docrelay/a': 'alpha', 'docrelay/b': 'beta' }));
    const source = new FileSecretSource(file, { 'docrelay/b': 'from-env' });
    await expect(source.get('docrelay/a')).resolves.toBe('alpha');
    await expect(source.get('docrelay/b')).resolves.toBe('from-env');
  });

  it('reads the file once, and again after a refresh', async () => {
    const file = join(dir, 'secrets.json');
    await writeFile(file, JSON.stringify({ key: 'one' }));
    const source = new FileSecretSource(file);
    await expect(source.get('key')).resolves.toBe('one');
    await writeFile(file, JSON.stringify({ key: 'two' }));
    await expect(source.get('key')).resolves.toBe('one');
    source.refresh('key');
    await expect(source.get('key')).resolves.toBe('two');
  });

  it('says a missing, empty, non-string or inherited name is not set', async () => {
    const file = join(dir, 'secrets.json');
    await writeFile(file, JSON.stringify({ empty: '', number: 7 }));
    const source = new FileSecretSource(file);
    for (const name of ['missing', 'empty', 'number', 'toString', '__proto__']) {
      const error = await failure(source.get(name));
      expect(error).toBeInstanceOf(SecretNotFoundError);
      expect((error as Error).message).toBe(`secret "${name}" is not set in ${file}`);
    }
  });

  it('fails on an unreadable file, and reads it once it is there', async () => {
    const file = join(dir, 'later.json');
    const source = new FileSecretSource(file);
    await expect(failure(source.get('key'))).resolves.toMatchObject({ code: 'SECRETS_FILE_UNREADABLE' });
    await writeFile(file, JSON.stringify({ key: 'now' }));
    await expect(source.get('key')).resolves.toBe('now');
  });

  it('refuses a file that is not JSON without quoting it (it holds secrets)', async () => {
    const file = join(dir, 'secrets.json');
    await writeFile(file, '{"key": "hunter2-very-secret"');
    const error = await failure(new FileSecretSource(file).get('key'));
    expect(error).toBeInstanceOf(DocrelayError);
    expect(error).toMatchObject({ code: 'SECRETS_FILE_INVALID' });
    expect((error as Error).message).not.toContain('hunter2');
  });

  it.each(['[]', 'null', '"text"'])('refuses %s, which is not an object of name to value', async (text) => {
    const file = join(dir, 'secrets.json');
    await writeFile(file, text);
    await expect(failure(new FileSecretSource(file).get('key'))).resolves.toMatchObject({
      code: 'SECRETS_FILE_INVALID',
      message: expect.stringContaining('must hold a JSON object'),
    });
  });
});

describe('FileEventPublisher', () => {
  it('appends each event as one JSON line in the shape EventBridge delivers, creating the folder', async () => {
    const file = join(dir, 'nested', 'events.jsonl');
    const publisher = new FileEventPublisher(file);
    await publisher.publish('Document Stored', { jobId: 'job-1' });
    await publisher.publish('Document Failed', { jobId: 'job-2' });
    const lines = (await readFile(file, 'utf8'))
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([
      {
        source: EVENT_SOURCE,
        'detail-type': 'Document Stored',
        time: expect.any(String),
        detail: { jobId: 'job-1' },
      },
      {
        source: EVENT_SOURCE,
        'detail-type': 'Document Failed',
        time: expect.any(String),
        detail: { jobId: 'job-2' },
      },
    ]);
    expect(Number.isNaN(Date.parse(lines[0].time))).toBe(false);
  });
});
