/**
 * `docrelay smoke --local` through the CLI's main(), against a local stack started in-process on loopback and
 * found through its endpoints file: the marked integration's sample is signed and sent, its job followed to
 * stored, each object checked against its SHA-256, and everything it made deleted; a failing run leaves it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { readLocalSettings } from '../../functions/commons/env';
import { type LocalStack, startLocalStack } from '../../local/stack/local-stack';
import { runCli } from '../helpers/run-cli';

jest.setTimeout(60_000);

const root = resolve(__dirname, '../..');
let stack: LocalStack;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'docrelay-cli-smoke-'));
  stack = await startLocalStack({
    settings: readLocalSettings({ DOCRELAY_DATA_DIR: dataDir, PORT: '0' }, root),
    reconcileIntervalMs: 600_000,
    logLevel: 'SILENT',
  });
});

afterAll(async () => {
  await stack?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

const cli = (argv: string[]) => runCli(argv, { cwd: root, env: { DOCRELAY_DATA_DIR: dataDir } });

/** The report's job ids and object locations. */
function reported(stdout: string) {
  const jobIds = [...stdout.matchAll(/^job (\S+): /gm)].map((match) => match[1] as string);
  const objects = [...stdout.matchAll(/^ {2}s3:\/\/([^/]+)\/(\S+): /gm)].map((match) => ({
    bucket: match[1] as string,
    key: match[2] as string,
  }));
  return { jobIds, objects };
}

async function objectExists(bucket: string, key: string): Promise<boolean> {
  try {
    await stack.clients.s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch {
    return false;
  }
}

describe('docrelay smoke --local', () => {
  it('sends the marked sample, checks the stored object byte for byte, cleans up and exits 0', async () => {
    const result = await cli(['smoke', '--local']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^smoke test of the local stack \(http:\/\/127\.0\.0\.1:\d+\): integration internal-notes, payload .*config\/samples\/internal-note\.json$/,
    );
    expect(lines[1]).toMatch(
      /^POST http:\/\/127\.0\.0\.1:\d+\/v1\/hooks\/internal-notes: 202 Accepted, delivery smoke-[0-9a-f-]{36}, 1 job\(s\)$/,
    );
    expect(lines[2]).toMatch(/^job \S+: stored after \d+\.\d s, 1 file\(s\)$/);
    expect(lines[3]).toMatch(/^ {2}s3:\/\/\S+: \d+ bytes, match the job's SHA-256/);
    expect(lines.slice(4)).toEqual([
      'cleaned up: 1 object(s) and 2 job table item(s) deleted',
      'smoke test passed',
    ]);

    const { jobIds, objects } = reported(result.stdout);
    expect(await stack.jobs.getJob(jobIds[0] as string)).toBeUndefined();
    expect(await objectExists(objects[0]?.bucket as string, objects[0]?.key as string)).toBe(false);
  });

  it('with --keep leaves the job and its object', async () => {
    const result = await cli(['smoke', '--local', '--keep']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^kept: delivery smoke-\S+, jobs \S+ and their objects \(--keep\)$/m);
    const { jobIds, objects } = reported(result.stdout);
    expect((await stack.jobs.getJob(jobIds[0] as string))?.status).toBe('stored');
    expect(await objectExists(objects[0]?.bucket as string, objects[0]?.key as string)).toBe(true);
  });

  it('a job that fails makes it exit 1, leaving the job in place to inspect', async () => {
    stack.emulator?.setFaults({ failNext: { count: 1, status: 400 } });
    const result = await cli(['smoke', '--local', '--timeout', '30']);
    expect(result).toMatchObject({ code: 1, stderr: '' });
    expect(result.stdout).toMatch(/^job \S+: failed \(DOCGEN_BAD_REQUEST: .+\)$/m);
    expect(result.stdout).toMatch(
      /^left in place for inspection: delivery smoke-\S+, jobs \S+ \(docrelay jobs show <jobId>\)\nsmoke test FAILED\n$/m,
    );
    const { jobIds } = reported(result.stdout);
    expect((await stack.jobs.getJob(jobIds[0] as string))?.status).toBe('failed');
  });

  it('a job not stored within --timeout (the service in an outage) makes it exit 1, saying so', async () => {
    stack.emulator?.pause();
    try {
      const result = await cli(['smoke', '--local', '--timeout', '1']);
      expect(result.code).toBe(1);
      expect(result.stdout).toMatch(/^job \S+: still (queued|processing) after 1 s \(--timeout\)/m);
      expect(result.stdout).toMatch(/smoke test FAILED\n$/);
    } finally {
      stack.emulator?.resume();
    }
  });

  it('an integration given without a payload and not marked for smoke is a usage error, exit 2', async () => {
    const result = await cli(['smoke', '--local', '--integration', 'stripe-invoices']);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'docrelay smoke: integration "stripe-invoices" has no smoke: { payload } in the config: give --payload <file>\n',
    });
  });

  it('a payload that matches no rule is reported as such, exit 1', async () => {
    const result = await cli([
      'smoke',
      '--local',
      '--integration',
      'stripe-invoices',
      '--payload',
      'config/samples/internal-note.json',
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /^POST \S+: 200 OK\nthe webhook did not accept a new delivery: it made no job: does the payload match a document rule of the integration\?\nsmoke test FAILED\n$/m,
    );
  });
});
