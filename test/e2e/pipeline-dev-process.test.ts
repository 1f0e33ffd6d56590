/**
 * `npm start` as a user runs it: `node bin/docrelay.js dev` in a child process with a fresh data directory
 * and PORT=0. A signed sample webhook ends as a .docx in the local S3 holding the payload's values, and
 * Ctrl-C (SIGINT) stops everything with exit code 0.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import mammoth from 'mammoth';
import type { JobView } from '../../functions/core/job-view';
import { LOCAL_CREDENTIALS } from '../../local/stack/aws-emulators';
import { type DevProcess, startDevProcess } from './helpers/dev-process';
import { waitForJobs } from './helpers/settle';
import { type HookBody, readSample, sha256 } from './helpers/stack';
import { signGithub } from './helpers/webhooks';

jest.setTimeout(60_000);

let dataDir: string;
let dev: DevProcess | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'docrelay-e2e-dev-'));
});

afterAll(async () => {
  await dev?.stop('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

it('turns a signed sample webhook into a .docx in the local S3, then stops cleanly on SIGINT', async () => {
  dev = await startDevProcess(dataDir);
  const secrets = JSON.parse(await readFile(join(dataDir, 'secrets.json'), 'utf8')) as Record<string, string>;
  const body = await readSample('github-release-published.json');

  const response = await fetch(`${dev.url}/v1/hooks/github-releases`, {
    method: 'POST',
    headers: signGithub(body, secrets['docrelay/github-webhook'] as string),
    body,
  });
  const answer = (await response.json()) as HookBody;
  expect(response.status).toBe(202);
  const jobId = answer.jobs.find((job) => job.rule === 'release-notes')?.jobId as string;
  const [view] = (await waitForJobs(
    async (id) => (await (await fetch(`${dev?.url}/v1/jobs/${id}`)).json()) as JobView,
    [jobId],
    { describe: (jobs) => `${JSON.stringify(jobs)}; output: ${dev?.output() ?? ''}` },
  )) as [JobView];
  expect({ status: view.status, error: view.error }).toEqual({ status: 'stored', error: undefined });

  const aws = dev.endpoints.aws;
  expect(aws?.s3).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  const s3 = new S3Client({
    region: aws?.region,
    endpoint: aws?.s3,
    forcePathStyle: true,
    credentials: LOCAL_CREDENTIALS,
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const file = view.files[0] as JobView['files'][number];
  expect(file.bucket).toBe(aws?.bucket);
  const object = await s3.send(new GetObjectCommand({ Bucket: file.bucket, Key: file.key }));
  const bytes = Buffer.from((await object.Body?.transformToByteArray()) ?? []);
  s3.destroy();
  expect(sha256(bytes)).toBe(file.sha256);
  const { value: text } = await mammoth.extractRawText({ buffer: bytes });
  expect(text).toContain('Codertocat/Hello-World');
  expect(text).toContain('0.0.1');
  expect(dev.output()).toContain(`job ${jobId} stored: s3://${file.bucket}/${file.key}`);

  const exit = await dev.stop('SIGINT');

  expect(exit).toEqual({ code: 0, signal: null });
  // A job still in flight (the delivery's second) finishes during the stop: its line may come in between.
  expect(dev.output()).toMatch(/stopping\.\.\.\n(?:\s+job \S+ stored: \S+\n)*stopped\s*$/);
});
