/**
 * Crashes and restarts: the data directory is the durable record. A worker killed (SIGKILL, the whole
 * `docrelay dev` process) between "document created" and "stored" resumes after a restart from its checkpoint
 * without a second document; jobs queued when the stack stopped continue after it starts again (the queue
 * emulator keeps messages in memory only: the reconciler sends them again at start-up); stored files stay.
 * The service emulator runs outside the restarted stacks here, as the real service would.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JobView } from '../../functions/core/job-view';
import { type EmulatorHandle, startEmulator } from '../../local/emulator/server';
import { startDevProcess } from './helpers/dev-process';
import { readSample, sha256, startTestStack, type TestStack } from './helpers/stack';
import { waitUntil } from './helpers/wait';
import { signStandardWebhooks } from './helpers/webhooks';

jest.setTimeout(60_000);

const apiKey = 'resume-test-service-key';
let service: EmulatorHandle;
let dataDir: string;
const stacks: TestStack[] = [];

/** The local stack on the shared data directory, against the long-lived service emulator. */
async function startStack(options: { startWorkers?: boolean } = {}): Promise<TestStack> {
  const stack = await startTestStack({
    dataDir,
    env: { DOCGEN_BASE_URL: service.url, DOCGEN_API_KEY: apiKey },
    ...options,
  });
  stacks.push(stack);
  return stack;
}

beforeEach(async () => {
  service = await startEmulator({ apiKey, seed: 5 });
  dataDir = await mkdtemp(join(tmpdir(), 'docrelay-e2e-resume-'));
});

afterEach(async () => {
  for (const stack of stacks.splice(0)) await stack.stop();
  await service.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('after a crash or a restart', () => {
  it('resumes a job killed between "document created" and "stored" without generating a second document', async () => {
    // Downloads fail, so the job sits between its checkpoint and the copy when the process is killed.
    service.setFaults({ downloadFailRate: 1 });
    const dev = await startDevProcess(dataDir, { DOCGEN_BASE_URL: service.url, DOCGEN_API_KEY: apiKey });
    let jobId: string;
    try {
      const secrets = JSON.parse(await readFile(join(dataDir, 'secrets.json'), 'utf8')) as Record<
        string,
        string
      >;
      const body = await readSample('internal-note.json');
      const response = await fetch(`${dev.url}/v1/hooks/internal-notes`, {
        method: 'POST',
        headers: signStandardWebhooks(body, secrets['docrelay/internal-notes-webhook'] as string),
        body,
      });
      expect(response.status).toBe(202);
      jobId = ((await response.json()) as { jobs: Array<{ jobId: string }> }).jobs[0]?.jobId as string;
      // A download was attempted, and the copy goes on failing until the job is checkpointed as created
      // (written beside a copy that outlasts CHECKPOINT_AFTER_MS, or after its first failure).
      await waitUntil('a download attempt', async () =>
        service.stats().requests.some((request) => request.path === '/download') ? true : undefined,
      );
      await waitUntil('the job checkpointed as created', async () => {
        const view = (await (await fetch(`${dev.url}/v1/jobs/${jobId}`)).json()) as JobView;
        return view.status === 'created' && view.document !== undefined ? true : undefined;
      });
    } finally {
      const exit = await dev.stop('SIGKILL');
      expect(exit.signal).toBe('SIGKILL');
    }
    expect(service.stats().documentsCreated).toBe(1);
    const [created] = service.stats().createdDocuments;
    service.setFaults({ downloadFailRate: 0 });

    const restarted = await startStack();
    const before = (await restarted.getJob(jobId)).body;
    const [view] = await restarted.waitForJobs([jobId]);

    expect(before.status).not.toBe('stored');
    expect(view?.status).toBe('stored');
    expect(view?.document?.id).toBe(created?.documentId);
    expect(service.stats().documentsCreated).toBe(1);
    const file = view?.files[0] as JobView['files'][number];
    const object = await restarted.readObject(file.bucket, file.key);
    expect(sha256(object.bytes)).toBe(created?.files[0]?.sha256);
    expect(restarted.lines.some((line) => /resumed 1 open jobs/.test(line))).toBe(true);
  });

  it('continues jobs that were queued when the stack stopped, and keeps the files stored before', async () => {
    const first = await startStack();
    const storedAnswer = await first.postGithub(
      await readSample('github-release-published.json'),
      'resume-stored',
    );
    const [storedBefore] = await first.waitForJobs([storedAnswer.body.jobs[0]?.jobId as string]);
    await first.waitForJobs(storedAnswer.body.jobs.map((job) => job.jobId));
    await first.stack.stopWorkers();
    const release = JSON.parse((await readSample('github-release-published.json')).toString('utf8'));
    release.release.tag_name = '0.0.2';
    const queuedAnswer = await first.postGithub(Buffer.from(JSON.stringify(release)), 'resume-queued');
    expect(queuedAnswer.status).toBe(202);
    const queuedIds = queuedAnswer.body.jobs.map((job) => job.jobId);
    expect((await first.getJob(queuedIds[0] as string)).body.status).toBe('queued');
    await first.stop();
    service.resetStats();

    const second = await startStack();
    const views = await second.waitForJobs(queuedIds);

    expect(views.map((view) => view.status)).toEqual(['stored', 'stored']);
    expect(service.stats().documentsCreated).toBe(2);
    const storedFile = storedBefore?.files[0] as JobView['files'][number];
    const kept = await second.readObject(storedFile.bucket, storedFile.key);
    expect(sha256(kept.bytes)).toBe(storedFile.sha256);
    const duplicate = await second.postGithub(
      await readSample('github-release-published.json'),
      'resume-stored',
    );
    expect(duplicate.status).toBe(200);
    expect(duplicate.body.jobs).toEqual(storedAnswer.body.jobs);
  });
});
