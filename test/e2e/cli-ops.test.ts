/**
 * The operational commands (send, put-event, jobs show, replay, dlq list, dlq redrive) through the CLI's
 * main(), against a local stack started in-process on loopback, found by the CLI through its endpoints file
 * as a second terminal would find `npm start`.
 */

import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { tailJobs } from '../../bin/commands/tail';
import { readLocalSettings } from '../../functions/commons/env';
import type { JobRecord } from '../../functions/core/job';
import type { JobView } from '../../functions/core/job-view';
import { type LocalStack, startLocalStack } from '../../local/stack/local-stack';
import { runCli } from '../helpers/run-cli';
import { rawText } from './helpers/raw-http';
import { waitForJobs } from './helpers/settle';

jest.setTimeout(60_000);

const root = resolve(__dirname, '../..');
const sample = (name: string): string => join(root, 'config/samples', name);

let stack: LocalStack;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'docrelay-cli-ops-'));
  stack = await startLocalStack({
    settings: readLocalSettings({ DOCRELAY_DATA_DIR: dataDir, PORT: '0' }, root),
    visibilityTimeoutSeconds: 2,
    maxReceiveCount: 2,
    reconcileIntervalMs: 600_000,
    logLevel: 'SILENT',
  });
});

afterAll(async () => {
  await stack?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** Runs the CLI as `npx docrelay ...` would, with the stack's data directory. */
const cli = (argv: string[], env: Record<string, string> = {}) =>
  runCli(argv, { cwd: root, env: { DOCRELAY_DATA_DIR: dataDir, ...env } });

/** Polls the job record until its status is one of `statuses` (bounded). */
async function waitForStatus(jobId: string, statuses: JobRecord['status'][], timeoutMs = 20_000) {
  const [job] = await waitForJobs((id) => stack.jobs.getJob(id), [jobId], {
    statuses,
    timeoutMs,
    intervalMs: 100,
  });
  return job as JobRecord;
}

/** Sends a sample through `docrelay send`; returns the job ids of the 202 answer. */
async function send(integration: string, file: string): Promise<string[]> {
  const result = await cli(['send', integration, '--payload', sample(file)]);
  // The status line on stderr; stdout is the answer's JSON alone.
  expect(result).toMatchObject({ code: 0, stderr: '202 Accepted\n' });
  const body = JSON.parse(result.stdout) as { deliveryId: string; jobs: Array<{ jobId: string }> };
  expect(body.jobs.length).toBeGreaterThan(0);
  return body.jobs.map((job) => job.jobId);
}

/** Makes the next job fail for good: the service refuses its next request with a 400. */
async function failedJob(): Promise<string> {
  stack.emulator?.setFaults({ failNext: { count: 1, status: 400 } });
  const [jobId] = await send('internal-notes', 'internal-note.json');
  const job = await waitForStatus(jobId as string, ['failed', 'stored']);
  expect(job.status).toBe('failed');
  return jobId as string;
}

async function dlqEntries(): Promise<Array<{ jobId?: string; reason?: string; job?: { status: string } }>> {
  const listed = await cli(['dlq', 'list', '--json']);
  expect(listed.code).toBe(0);
  return JSON.parse(listed.stdout) as Array<{ jobId?: string; reason?: string; job?: { status: string } }>;
}

const oneLine = (text: string): void => {
  expect(text.endsWith('\n')).toBe(true);
  expect(text.trimEnd().split('\n')).toHaveLength(1);
};

describe('docrelay send', () => {
  it.each([
    ['github-releases', 'github-release-published.json', 2],
    ['stripe-invoices', 'stripe-invoice-paid.json', 1],
    ['shopify-orders', 'shopify-order.json', 1],
    ['internal-notes', 'internal-note.json', 1],
  ])('signs %s as its sender would: 202, and every job ends stored', async (integration, file, jobs) => {
    const jobIds = await send(integration, file);
    expect(jobIds).toHaveLength(jobs);
    for (const jobId of jobIds)
      expect((await waitForStatus(jobId, ['stored', 'failed'])).status).toBe('stored');
  });

  it('sends the same delivery id again as a duplicate (200, nothing new)', async () => {
    // Content of its own: a payload already delivered under another id is a duplicate of that delivery.
    const payload = JSON.parse(await readFile(sample('github-release-published.json'), 'utf8')) as object;
    const file = join(dataDir, 'dup-release.json');
    await writeFile(file, JSON.stringify({ ...payload, cli_ops: 'dup-1' }));
    const args = ['send', 'github-releases', '--payload', file];
    const first = await cli([...args, '--delivery-id', 'cli-ops-dup-1']);
    const second = await cli([...args, '--delivery-id', 'cli-ops-dup-1']);
    expect(first).toMatchObject({ code: 0, stderr: '202 Accepted\n' });
    expect(second).toMatchObject({ code: 0, stderr: '200 OK\n' });
    const { jobs } = JSON.parse(first.stdout) as { jobs: Array<{ jobId: string }> };
    expect(JSON.parse(second.stdout)).toEqual({ deliveryId: 'cli-ops-dup-1', jobs, duplicate: true });
    for (const { jobId } of jobs) await waitForStatus(jobId, ['stored']);
  });

  it('fails with 401 on one line when the secrets file holds another secret, never printing it', async () => {
    const secretsFile = join(dataDir, 'secrets.json');
    const secrets = JSON.parse(await readFile(secretsFile, 'utf8')) as Record<string, string>;
    const tampered = { ...secrets, 'docrelay/github-webhook': 'not-the-configured-secret' };
    const tamperedFile = join(dataDir, 'tampered-secrets.json');
    await writeFile(tamperedFile, JSON.stringify(tampered));
    const result = await cli(
      ['send', 'github-releases', '--payload', sample('github-release-published.json')],
      {
        DOCRELAY_SECRETS_FILE: tamperedFile,
      },
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    oneLine(result.stderr);
    expect(result.stderr).toMatch(/^docrelay send: 401 /);
    expect(result.stderr).not.toContain('not-the-configured-secret');
    expect(result.stderr).not.toContain(secrets['docrelay/github-webhook']);
  });

  it('points an EventBridge-only integration to put-event', async () => {
    const result = await cli(['send', 'order-events', '--payload', sample('order-paid-event.json')]);
    expect(result.code).toBe(1);
    oneLine(result.stderr);
    expect(result.stderr).toMatch(/use docrelay put-event order-events --event <file>/);
  });
});

describe('docrelay put-event', () => {
  it('feeds the sample event to the event path: 202 body, and the job ends stored', async () => {
    const result = await cli(['put-event', 'order-events', '--event', sample('order-paid-event.json')]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const body = JSON.parse(result.stdout) as { deliveryId: string; jobs: Array<{ jobId: string }> };
    expect(body.deliveryId).toBe('6a7e8feb-b491-4cf7-a9f1-bf3703467718');
    expect(body.jobs).toHaveLength(1);
    expect((await waitForStatus(body.jobs[0]?.jobId as string, ['stored', 'failed'])).status).toBe('stored');
  });

  it('refuses an event its integration pattern would not match, and one without detail', async () => {
    const other = join(dataDir, 'other-event.json');
    await writeFile(
      other,
      JSON.stringify({ source: 'someone.else', 'detail-type': 'Order Paid', detail: {} }),
    );
    const mismatch = await cli(['put-event', 'order-events', '--event', other]);
    expect(mismatch.code).toBe(1);
    expect(mismatch.stderr).toMatch(/does not match .*eventPattern \(source is "someone.else"/);
    await writeFile(other, JSON.stringify({ source: 'myapp.orders', 'detail-type': 'Order Paid' }));
    const missing = await cli(['put-event', 'order-events', '--event', other]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/needs "detail"/);
  });
});

describe('docrelay jobs show', () => {
  let jobId: string;

  beforeAll(async () => {
    [jobId] = (await send('internal-notes', 'internal-note.json')) as [string];
    await waitForStatus(jobId, ['stored']);
  });

  it('shows a stored job: status, attempts, document, each file with key, size, sha256 and link', async () => {
    const result = await cli(['jobs', 'show', jobId]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(new RegExp(`^job ${jobId}: stored\n`));
    expect(result.stdout).toMatch(/\n {2}attempts {5}1\n/);
    expect(result.stdout).toMatch(/\n {2}document {5}\S+ ".*" \(template 9003\/90031\)/);
    expect(result.stdout).toMatch(
      /\n {2}file {9}s3:\/\/docrelay-documents\/internal-notes\/.+\n {15}\d+ bytes, .+, sha256 [0-9a-f]{64}\n {15}http:\/\/127\.0\.0\.1:\d+\//,
    );
  });

  it('prints the job view with --json', async () => {
    const result = await cli(['jobs', 'show', jobId, '--json']);
    expect(result.code).toBe(0);
    const view = JSON.parse(result.stdout) as JobView;
    expect(view).toMatchObject({
      jobId,
      integration: 'internal-notes',
      rule: 'note',
      status: 'stored',
      attempts: 1,
    });
    expect(view.files).toHaveLength(1);
    expect(view.files[0]?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(view.files[0]?.downloadUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/docrelay-documents\//);
  });

  it('exits 1 for an unknown job', async () => {
    const result = await cli(['jobs', 'show', 'no-such-job']);
    expect(result).toMatchObject({ code: 1, stdout: '', stderr: 'docrelay jobs: no job no-such-job\n' });
  });
});

describe('finding and following: send --wait, jobs list, jobs download', () => {
  let jobId: string;
  let deliveryId: string;

  beforeAll(async () => {
    const result = await cli(['send', 'internal-notes', '--payload', sample('internal-note.json'), '--wait']);
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout) as { deliveryId: string; jobs: Array<{ jobId: string }> };
    jobId = body.jobs[0]?.jobId as string;
    deliveryId = body.deliveryId;
    // The status line, the progress lines, then the outcome, on stderr (stdout stays the answer's JSON).
    expect(result.stderr).toMatch(/^202 Accepted\nwaiting: /);
    expect(result.stderr).toContain(`job ${jobId} stored: s3://docrelay-documents/internal-notes/`);
  });

  it('send --wait returns once the job is stored', async () => {
    expect((await stack.jobs.getJob(jobId))?.status).toBe('stored');
  });

  it('jobs list --json includes the stored job, newest first; --status failed leaves it out', async () => {
    const listed = await cli(['jobs', 'list', '--json', '--integration', 'internal-notes']);
    expect(listed.code).toBe(0);
    const views = JSON.parse(listed.stdout) as JobView[];
    expect(views.find((view) => view.jobId === jobId)).toMatchObject({ status: 'stored', deliveryId });
    const received = views.map((view) => view.receivedAt);
    expect(received).toEqual([...received].sort().reverse());

    const failed = JSON.parse(
      (await cli(['jobs', 'list', '--json', '--status', 'failed'])).stdout,
    ) as JobView[];
    expect(failed.map((view) => view.jobId)).not.toContain(jobId);
    expect(failed.every((view) => view.status === 'failed')).toBe(true);
  });

  it('jobs list --delivery finds the jobs of one delivery; the table form has one line per job', async () => {
    const byDelivery = JSON.parse(
      (await cli(['jobs', 'list', '--json', '--delivery', deliveryId])).stdout,
    ) as JobView[];
    expect(byDelivery.map((view) => view.jobId)).toEqual([jobId]);
    const table = await cli(['jobs', 'list', '--delivery', deliveryId, '--since', '1h']);
    expect(table.code).toBe(0);
    expect(table.stdout.trimEnd().split('\n')).toHaveLength(2);
    expect(table.stdout).toMatch(new RegExp(`${jobId}\\s+stored\\s+internal-notes/note`));
  });

  it('tail prints the newest jobs, then a line for each job that appears or changes', async () => {
    const stdout = new PassThrough();
    let text = '';
    stdout.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    const controller = new AbortController();
    let looks = 0;
    let newJob = '';
    // Between the first and the second look a new job is sent and stored; the second look ends the tail.
    const step = async (): Promise<void> => {
      looks += 1;
      if (looks === 1) {
        [newJob] = (await send('internal-notes', 'internal-note.json')) as [string];
        await waitForStatus(newJob, ['stored']);
      } else {
        controller.abort();
      }
    };
    const code = await tailJobs(
      { stdout, stderr: new PassThrough(), cwd: root, env: { DOCRELAY_DATA_DIR: dataDir } },
      { interval: 1, integration: 'internal-notes', json: true },
      controller.signal,
      step,
    );
    expect(code).toBe(0);
    const lines = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { jobId: string; status: string });
    expect(lines.length).toBeLessThanOrEqual(11);
    expect(lines.at(-1)).toMatchObject({ jobId: newJob, status: 'stored' });
    expect(lines.find((line) => line.jobId === jobId)).toBeDefined();
  });

  it('jobs download writes the stored file byte for byte', async () => {
    const out = await mkdtemp(join(tmpdir(), 'docrelay-cli-download-'));
    try {
      const result = await cli(['jobs', 'download', jobId, '--out', out]);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      const job = await stack.jobs.getJob(jobId);
      const file = job?.files[0];
      const stored = await stack.clients.s3.send(
        new GetObjectCommand({ Bucket: file?.bucket, Key: file?.key }),
      );
      const expected = Buffer.from((await stored.Body?.transformToByteArray()) ?? []);
      const written = await readFile(join(out, basename(file?.filename ?? '')));
      expect(written.equals(expected)).toBe(true);
      expect(createHash('sha256').update(written).digest('hex')).toBe(file?.sha256);
      expect(result.stdout).toContain(`${written.length} bytes  sha256 ${file?.sha256}`);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it('jobs download says on one line that --out names a file, not a folder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'docrelay-cli-download-'));
    try {
      const file = join(dir, 'a-file');
      await writeFile(file, 'x');
      const result = await cli(['jobs', 'download', jobId, '--out', file]);
      expect(result).toMatchObject({
        code: 1,
        stderr: `docrelay jobs: --out ${file}: it is a file, not a folder\n`,
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('jobs download refuses a job without stored files', async () => {
    const result = await cli(['jobs', 'download', 'no-such-job']);
    expect(result).toMatchObject({ code: 1, stderr: 'docrelay jobs: no job no-such-job\n' });
  });
});

describe('failed jobs: jobs show, dlq list, dlq redrive, replay', () => {
  it('shows a failed job with its error, lists it in the DLQ with its reason, and redrives it to stored', async () => {
    const jobId = await failedJob();

    const shown = await cli(['jobs', 'show', jobId]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^job ${jobId}: failed\n`));
    expect(shown.stdout).toMatch(/\n {2}error {8}DOCGEN_BAD_REQUEST: /);

    const entry = (await dlqEntries()).find((e) => e.jobId === jobId);
    expect(entry).toMatchObject({ jobId, reason: 'DOCGEN_BAD_REQUEST', job: { status: 'failed' } });
    const human = await cli(['dlq', 'list']);
    expect(human.stdout).toMatch(
      new RegExp(
        `^${jobId}  failed  attempts 1  reason DOCGEN_BAD_REQUEST  error DOCGEN_BAD_REQUEST: .+$`,
        'm',
      ),
    );
    expect(human.stdout).toMatch(/^\d+ message\(s\) in the dead-letter queue\n$/m);

    // The cause is gone (failNext served once): redrive sends it back.
    const redriven = await cli(['dlq', 'redrive']);
    expect(redriven.code).toBe(0);
    expect(redriven.stdout).toMatch(/^redriven 1, skipped 0 \(job already stored\), left 0\n$/m);
    const job = await waitForStatus(jobId, ['stored', 'failed']);
    expect(job.status).toBe('stored');
    expect(job.attempts).toBe(2);
    expect(await dlqEntries()).toEqual([]);
    expect((await cli(['dlq', 'list'])).stdout).toBe('the dead-letter queue is empty\n');
  });

  it('replays a failed job from its checkpoint to stored, taking its message out of the DLQ', async () => {
    const jobId = await failedJob();
    // Another message stays where it is.
    await stack.deadLetters.parkRaw('not a job message', 'INVALID_JOB_MESSAGE');
    expect((await dlqEntries()).map((e) => e.jobId ?? 'invalid').sort()).toEqual(['invalid', jobId].sort());

    const replayed = await cli(['replay', jobId]);
    expect(replayed).toMatchObject({ code: 0, stderr: '' });
    expect(replayed.stdout).toBe(
      `job ${jobId}: failed -> queued (replay from its last checkpoint)\nremoved its message from the dead-letter queue\n`,
    );
    expect((await dlqEntries()).map((e) => e.jobId ?? 'invalid')).toEqual(['invalid']);
    const job = await waitForStatus(jobId, ['stored', 'failed']);
    expect(job.status).toBe('stored');
    expect(job.error).toBeUndefined();
    await purgeInvalid();
    expect(await dlqEntries()).toEqual([]);
  });

  it("the console's replay takes the job's message out of the DLQ too, and a run that fails parks it again", async () => {
    const jobId = await failedJob();
    // The run the replay starts fails as the first did: the job is back in the queue once, with its reason.
    stack.emulator?.setFaults({ failNext: { count: 1, status: 400 } });
    const answer = await rawText(
      stack.url,
      'POST',
      `/_console/jobs/${jobId}/replay`,
      { 'content-type': 'application/json', origin: stack.url },
      '{}',
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({
      jobId,
      from: 'failed',
      status: 'queued',
      removedFromDeadLetterQueue: 1,
    });
    expect((await waitForStatus(jobId, ['failed'])).attempts).toBe(2);
    const entries = (await dlqEntries()).filter((e) => e.jobId === jobId);
    expect(entries).toEqual([
      expect.objectContaining({
        reason: 'DOCGEN_BAD_REQUEST',
        job: expect.objectContaining({ status: 'failed' }),
      }),
    ]);

    const redriven = await cli(['dlq', 'redrive']);
    expect(redriven.stdout).toMatch(/^redriven 1, skipped 0 \(job already stored\), left 0\n$/m);
    expect((await waitForStatus(jobId, ['stored', 'failed'])).status).toBe('stored');
    expect(await dlqEntries()).toEqual([]);
  });

  it('replays a stored job only with --fresh, which makes a new document', async () => {
    const [jobId] = (await send('internal-notes', 'internal-note.json')) as [string];
    const before = await waitForStatus(jobId, ['stored']);

    const refused = await cli(['replay', jobId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `docrelay replay: job ${jobId} is stored already; replay --fresh generates a new document\n`,
    );

    const created = stack.emulator?.stats().documentsCreated ?? 0;
    const fresh = await cli(['replay', jobId, '--fresh']);
    expect(fresh.code).toBe(0);
    expect(fresh.stdout).toMatch(
      new RegExp(
        `^job ${jobId}: stored -> queued \\(replay from the start: a new document will be generated\\)\n`,
      ),
    );
    const after = await waitForStatus(jobId, ['stored', 'failed']);
    // The new files replace the old: the job's prefix holds only them.
    const listed = await stack.clients.s3.send(
      new ListObjectsV2Command({ Bucket: after.files[0]?.bucket, Prefix: `internal-notes/` }),
    );
    const keys = (listed.Contents ?? [])
      .map((object) => object.Key)
      .filter((key) => key?.includes(`/${jobId}/`));
    expect(keys).toEqual(after.files.map((file) => file.key));
    for (const file of before.files) {
      if (file.key !== after.files[0]?.key)
        expect(fresh.stdout).toContain(`removed the previous s3://${file.bucket}/${file.key}`);
    }
    expect(after.status).toBe('stored');
    expect(after.document?.id).not.toBe(before.document?.id);
    expect(after.documentsRequested).toBe(before.documentsRequested + 1);
    expect(stack.emulator?.stats().documentsCreated).toBe(created + 1);
  });

  it('refuses to replay an open job, and leaves an invalid DLQ message in place', async () => {
    await stack.stopWorkers();
    let jobId: string;
    try {
      [jobId] = (await send('internal-notes', 'internal-note.json')) as [string];
      const refused = await cli(['replay', jobId]);
      expect(refused.code).toBe(1);
      oneLine(refused.stderr);
      expect(refused.stderr).toMatch(new RegExp(`job ${jobId} is queued: it is still in progress`));

      await stack.deadLetters.parkRaw('not a job message', 'INVALID_JOB_MESSAGE');
      const listed = await cli(['dlq', 'list']);
      expect(listed.stdout).toMatch(
        /^\(invalid message\) {2}message \S+ {2}reason INVALID_JOB_MESSAGE {2}the queue message is not a job message: not JSON$/m,
      );
      const redriven = await cli(['dlq', 'redrive']);
      expect(redriven.stdout).toMatch(
        /^left \(invalid message\) \(message \S+\): the queue message is not a job message/m,
      );
      expect(redriven.stdout).toMatch(/^redriven 0, skipped 0 \(job already stored\), left 1\n$/m);
      // Left in place, and visible again at once.
      expect((await dlqEntries()).filter((e) => e.jobId === undefined)).toHaveLength(1);
    } finally {
      stack.startWorkers();
    }
    await waitForStatus(jobId, ['stored']);
    await purgeInvalid();
    expect(await dlqEntries()).toEqual([]);
  });
});

describe('a deployed stack, through the variables the Lambdas read', () => {
  // The SDK's own endpoint variables point the "AWS" clients at the emulators, so the AWS code path runs.
  const sdkEnv = (): Record<string, string> => ({
    AWS_ENDPOINT_URL_SQS: stack.aws.endpoints.sqs,
    AWS_ENDPOINT_URL_DYNAMODB: stack.aws.endpoints.dynamodb,
    AWS_ENDPOINT_URL_S3: stack.aws.endpoints.s3,
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    AWS_REGION: 'us-east-1',
  });
  const awsTarget = (): Record<string, string> => ({
    DOCRELAY_DATA_DIR: join(dataDir, 'no-local-stack'),
    DOCRELAY_TABLE: stack.aws.tableName,
    DOCRELAY_QUEUE_URL: stack.aws.queueUrl,
    DOCRELAY_DLQ_URL: stack.aws.dlqUrl,
    DOCRELAY_BUCKET: stack.aws.bucket,
    AWS_REGION: 'us-east-1',
  });
  const saved: Record<string, string | undefined> = {};
  let warn: jest.SpyInstance;

  beforeAll(() => {
    // The SQS client warns that the emulator's queue URLs are not AWS hosts; on AWS they are.
    warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    for (const [name, value] of Object.entries(sdkEnv())) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
  });

  afterAll(() => {
    warn.mockRestore();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('reads a job from the table, replays it, lists the DLQ and redrives it message by message', async () => {
    const jobId = await failedJob();
    const shown = await cli(['jobs', 'show', jobId, '--json'], awsTarget());
    expect(shown).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(shown.stdout)).toMatchObject({
      jobId,
      status: 'failed',
      error: { code: 'DOCGEN_BAD_REQUEST' },
    });

    const listed = await cli(['dlq', 'list', '--json'], awsTarget());
    expect(JSON.parse(listed.stdout)).toMatchObject([
      { jobId, reason: 'DOCGEN_BAD_REQUEST', job: { status: 'failed' } },
    ]);

    // An invalid message stays: redrive cannot hand the whole queue to an SQS move task, so it moves each one.
    await stack.deadLetters.parkRaw('{"v":2}', 'INVALID_JOB_MESSAGE');
    const redriven = await cli(['dlq', 'redrive'], awsTarget());
    expect(redriven).toMatchObject({ code: 0, stderr: '' });
    expect(redriven.stdout).toMatch(/^redriven 1, skipped 0 \(job already stored\), left 1\n$/m);
    expect((await waitForStatus(jobId, ['stored', 'failed'])).status).toBe('stored');

    const stored = await cli(['jobs', 'show', jobId], awsTarget());
    expect(stored.stdout).toMatch(new RegExp(`^job ${jobId}: stored\n`));
    expect(stored.stdout).toMatch(/X-Amz-Signature=/);
    const fresh = await cli(['replay', jobId, '--fresh'], awsTarget());
    expect(fresh.code).toBe(0);
    expect((await waitForStatus(jobId, ['stored', 'failed'])).status).toBe('stored');
  });

  it('starts an SQS move task when every message can go back (the emulator has none: a one-line error)', async () => {
    await purgeInvalid();
    const jobId = await failedJob();
    const redriven = await cli(['dlq', 'redrive'], awsTarget());
    expect(redriven.code).toBe(1);
    oneLine(redriven.stderr);
    expect(redriven.stderr).toMatch(
      /^docrelay dlq: SQS did not start the move task \(.+\); 1 failed job\(s\) were reset/,
    );
    // The job was reset before the move task was asked for, and its message is still in the DLQ...
    expect((await stack.jobs.getJob(jobId))?.status).toBe('queued');
    expect((await dlqEntries()).map((e) => e.jobId)).toEqual([jobId]);
    // ...so redriving it message by message (as locally) still works.
    expect((await cli(['dlq', 'redrive'])).stdout).toMatch(/^redriven 1, skipped 0/m);
    expect((await waitForStatus(jobId, ['stored', 'failed'])).status).toBe('stored');
    expect(await dlqEntries()).toEqual([]);
  });
});

/** Deletes the DLQ's messages that are not job messages (test set-up). */
async function purgeInvalid(): Promise<void> {
  const sqs = stack.clients.sqs;
  for (let round = 0; round < 10; round += 1) {
    const received = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: stack.aws.dlqUrl,
        MaxNumberOfMessages: 10,
        VisibilityTimeout: 0,
      }),
    );
    const invalid = (received.Messages ?? []).filter((message) => !(message.Body ?? '').includes('"jobId"'));
    if (invalid.length === 0) return;
    for (const message of invalid) {
      await sqs.send(
        new DeleteMessageCommand({ QueueUrl: stack.aws.dlqUrl, ReceiptHandle: message.ReceiptHandle }),
      );
    }
  }
}

describe('usage and targets', () => {
  it.each([
    [['send'], /^error: required option '--payload <file>' not specified \(add --help for usage\)\n$/],
    [['send', '--payload', 'x'], /missing required argument 'integrationId'/],
    [['send', 'github-releases'], /required option '--payload <file>' not specified/],
    [['send', 'github-releases', '--payload', 'x', '--bogus'], /unknown option '--bogus'/],
    [
      ['send', 'stripe-invoices', '--payload', 'x', '--delivery-id', 'd'],
      /scheme stripe carries no delivery id header/,
    ],
    [['put-event', 'order-events'], /required option '--event <file>' not specified/],
    [['jobs', 'lis'], /unknown command 'lis' \(Did you mean list\?\)/],
    [['jobs', 'list', 'x'], /too many arguments for 'list'/],
    [['jobs', 'list', '--status', 'done'], /Allowed choices are queued, processing, created, stored, failed/],
    [['jobs', 'list', '--since', 'yesterday'], /--since must be an ISO 8601 time or a duration/],
    [['replay'], /missing required argument 'jobId'/],
    [['replay', 'a', 'b'], /too many arguments for 'replay'/],
    [['dlq', 'purge'], /unknown command 'purge'/],
    [['dlq', 'list', '--max', '0'], /It must be a whole number from 1 to 100000/],
    [['dlq', 'redrive', '--json'], /unknown option '--json'/],
  ])('%j is a usage error: exit 2, one line', async (argv, message) => {
    const result = await cli(argv);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    oneLine(result.stderr);
  });

  it('says to start the stack when none runs for the data directory', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'docrelay-cli-ops-empty-'));
    try {
      for (const argv of [
        ['jobs', 'show', 'x'],
        ['dlq', 'list'],
        ['replay', 'x'],
        ['put-event', 'order-events', '--event', sample('order-paid-event.json')],
      ]) {
        const result = await cli(argv, { DOCRELAY_DATA_DIR: empty });
        expect(result.code).toBe(1);
        oneLine(result.stderr);
        expect(result.stderr).toMatch(
          /no local stack is running for .+: start it with npm start \(or set DOCRELAY_TABLE/,
        );
      }
      const sent = await cli(['send', 'internal-notes', '--payload', sample('internal-note.json')], {
        DOCRELAY_DATA_DIR: empty,
        DOCRELAY_SECRETS_FILE: join(dataDir, 'secrets.json'),
      });
      expect(sent.code).toBe(1);
      expect(sent.stderr).toMatch(/start it with npm start, or give --url <base>/);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('names the missing variables when a deployed stack is targeted half-way', async () => {
    const result = await cli(['dlq', 'list'], { DOCRELAY_TABLE: 'docrelay-jobs' });
    expect(result.code).toBe(1);
    oneLine(result.stderr);
    expect(result.stderr).toMatch(/missing: DOCRELAY_QUEUE_URL, DOCRELAY_DLQ_URL, DOCRELAY_BUCKET$/m);
  });

  it('sends to --url when given', async () => {
    const result = await cli(
      ['send', 'internal-notes', '--payload', sample('internal-note.json'), '--url', stack.url],
      {
        DOCRELAY_DATA_DIR: join(dataDir, 'elsewhere'),
        DOCRELAY_SECRETS_FILE: join(dataDir, 'secrets.json'),
      },
    );
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout) as { jobs: Array<{ jobId: string; rule: string }> };
    expect(body.jobs).toMatchObject([{ rule: 'note' }]);
    await waitForStatus(body.jobs[0]?.jobId as string, ['stored']);
  });
});

// Last: the failed job it leaves in the dead-letter queue would change the counts of the tests above.
describe('send --wait on a job that fails', () => {
  it('send --wait exits 1 when a job fails', async () => {
    stack.emulator?.setFaults({ failNext: { count: 1, status: 400 } });
    const result = await cli(['send', 'internal-notes', '--payload', sample('internal-note.json'), '--wait']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/job \S+ failed: /);
  });
});
