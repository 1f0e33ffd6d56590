/**
 * The local stack with its workers and service emulator in a child process (`workers: 'child'`, what
 * `docrelay dev` runs): a signed webhook is stored end to end and its console line reaches this process;
 * the child runs at a lower priority; stopping the workers waits for the child's batch in flight and leaves
 * new jobs queued, their messages visible, until they start again; a config reload reaches the child's handlers; a child
 * that dies is started again, with the running config and the service on its old port, and the jobs it held
 * are sent again at once; a child that cannot
 * start fails the start with its message and leaves nothing running. (That the child ends when its parent
 * is killed: aws-emulators-process.test.ts.)
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { JobView } from '../../functions/core/job-view';
import { childrenOf, commandLineOf } from './helpers/processes';
import { startTestStack, type TestStack } from './helpers/stack';
import { waitUntil } from './helpers/wait';
import { signGithub } from './helpers/webhooks';

jest.setTimeout(60_000);

/** One integration whose rule's Title mapping the reload test changes (the worker evaluates `data`). */
const configWith = (titlePrefix: string): string => `service:
  baseUrl: https://docs.example.com
  apiKeySecret: docrelay/service-api-key
  maxConcurrency: 2
storage:
  keyPattern: "{integration}/{jobId}/{filename}"
integrations:
  - id: notes
    verify: { scheme: github, secret: docrelay/notes-webhook }
    documents:
      - name: note
        template: { id: "9003" }
        data:
          Title: "'${titlePrefix}: ' & title"
          Body: "body"
`;

let configDir: string;
let configPath: string;
let t: TestStack;

beforeAll(async () => {
  configDir = await mkdtemp(join(tmpdir(), 'docrelay-e2e-worker-child-config-'));
  configPath = join(configDir, 'docrelay.yaml');
  await writeFile(configPath, configWith('v1'));
  t = await startTestStack({
    workers: 'child',
    env: { DOCRELAY_CONFIG: configPath },
    // Each generation takes a while, so that a test can catch a batch in flight.
    emulator: { seed: 31, faults: { generationLatencyMs: 400 } },
    reconcileIntervalMs: 600_000,
  });
});

afterAll(async () => {
  await t?.dispose();
  await rm(configDir, { recursive: true, force: true });
});

let sent = 0;
/** Posts a signed note; returns its one job id. */
async function postNote(title: string): Promise<string> {
  sent += 1;
  const body = Buffer.from(JSON.stringify({ title, body: `note ${sent}` }));
  const answer = await t.post('notes', body, signGithub(body, await t.secret('docrelay/notes-webhook')));
  expect(answer.status).toBe(202);
  return answer.body.jobs[0]?.jobId as string;
}

/** The text of a stored job's one file, read back from the local S3. */
async function storedText(view: JobView): Promise<string> {
  expect(view.status).toBe('stored');
  const file = view.files[0] as JobView['files'][number];
  return (await t.readObject(file.bucket, file.key)).bytes.toString('utf8');
}

const linuxOnly = process.platform === 'linux' ? it : it.skip;

/** The job message waiting in the queue now (no long poll), left visible. */
async function receiveNow(): Promise<Message> {
  const received = await t.sqs.send(
    new ReceiveMessageCommand({ QueueUrl: t.stack.aws.queueUrl, WaitTimeSeconds: 0, VisibilityTimeout: 0 }),
  );
  const message = received.Messages?.[0];
  if (message === undefined) throw new Error('no job message is visible in the queue');
  return message;
}

const jobStatus = async (jobId: string): Promise<string> => (await t.getJob(jobId)).body.status;

/**
 * With the workers stopped: the job's message is visible in the queue now and the job queued; once the
 * workers start again, the job is stored with its note's title.
 */
async function expectQueuedUntilWorkersStart(jobId: string, title: string): Promise<void> {
  const message = await receiveNow();
  expect(message.Body).toContain(jobId);
  expect(await jobStatus(jobId)).toBe('queued');

  t.stack.startWorkers();
  const [view] = await t.waitForJobs([jobId]);
  expect(await storedText(view as JobView)).toContain(`v1: ${title}`);
}

it('runs the workers and the service emulator outside this process, and tells their lines here', async () => {
  expect(t.stack.emulator).toBeUndefined();
  expect(t.stack.docgen).toBe('embedded');

  const jobId = await postNote('first');
  const [view] = await t.waitForJobs([jobId]);

  expect(await storedText(view as JobView)).toContain('v1: first');
  const file = (view as JobView).files[0] as JobView['files'][number];
  // The child's line crosses a pipe after the job's write: waited for, not assumed.
  const line = `job ${jobId} stored: s3://${file.bucket}/${file.key}`;
  await waitUntil(`the child's line "${line}"`, async () => (t.lines.includes(line) ? true : undefined));
  // The child publishes, so the child writes the events file (after the job's write, too).
  await waitUntil('the job event in events.jsonl', async () => {
    const events = await readFile(join(t.dataDir, 'events.jsonl'), 'utf8').catch(() => '');
    return events.includes(`"jobId":"${jobId}"`) ? true : undefined;
  });
});

linuxOnly('runs the workers at a lower priority than this process, which answers the webhooks', () => {
  const workers = childrenOf(process.pid).filter((pid) => commandLineOf(pid).includes('workers-child.ts'));

  expect(workers).toHaveLength(1);
  expect(getPriority(workers[0])).toBe(Math.min(19, getPriority() + 10));
});

it('stops the workers after their batch in flight, keeps new jobs queued, and starts them again', async () => {
  const inFlight = await postNote('in flight');
  await waitUntil(`job ${inFlight} to be taken by a lane`, async () =>
    (await jobStatus(inFlight)) === 'queued' ? undefined : true,
  );

  await t.stack.stopWorkers();

  // The batch in flight finished before stopWorkers resolved, its line told here first.
  expect(await jobStatus(inFlight)).toBe('stored');
  expect(t.lines).toContainEqual(expect.stringMatching(new RegExp(`^job ${inFlight} stored: `)));
  const waiting = await postNote('waiting');
  // Nothing holds its message: the stop waited out the lanes' receives. (A receive cut short leaves the queue
  // emulator waiting on its behalf: the next message would go to nobody, invisible for its timeout.)
  await expectQueuedUntilWorkersStart(waiting, 'waiting');
});

it('gives back to the queue, at once, a message that a lane receives while the workers stop', async () => {
  const stopping = t.stack.stopWorkers();
  const arriving = await postNote('while stopping');
  await stopping;

  await expectQueuedUntilWorkersStart(arriving, 'while stopping');
});

it('hands a reloaded config to the workers: the next job follows its mapping', async () => {
  await writeFile(configPath, configWith('v2'));

  const reloaded = await t.stack.reloadConfig();

  expect(reloaded.reloaded).toBe(true);
  const jobId = await postNote('after reload');
  const [view] = await t.waitForJobs([jobId]);
  expect(await storedText(view as JobView)).toContain('v2: after reload');
});

const health = async (): Promise<{ status: number; body: unknown }> => {
  const response = await fetch(`${t.stack.url}/healthz`);
  return { status: response.status, body: await response.json() };
};

linuxOnly(
  'starts the workers again when their process dies, with the running config, the service at its URL and the jobs it held, /healthz saying 503 meanwhile',
  async () => {
    const [dead] = childrenOf(process.pid).filter((pid) => commandLineOf(pid).includes('workers-child.ts'));
    // A job the dying process holds (each generation takes 400 ms).
    const held = await postNote('held by the dead process');
    await waitUntil('the job to be claimed', async () => {
      const status = await jobStatus(held);
      if (status === 'stored') throw new Error('the job was stored before the kill');
      return status === 'processing' || status === 'created' ? true : undefined;
    });
    // The file now holds an edit nobody took: a new process must start with the config the stack runs (v2).
    await writeFile(configPath, 'integrations: [');
    try {
      expect(await health()).toEqual({ status: 200, body: { status: 'ok', workers: 'running' } });
      process.kill(dead as number, 'SIGKILL');
      // The restart waits 1 s before it starts the new process: /healthz says so meanwhile.
      await waitUntil('/healthz to say the workers are restarting', async () =>
        (await health()).status === 503 ? true : undefined,
      );
      expect((await health()).body).toMatchObject({ status: 'degraded', workers: 'restarting' });
      const again = await waitUntil("the workers' process to run again", async () =>
        t.lines.find((line) => line.startsWith("the workers' process runs again")),
      );
      expect(await health()).toEqual({ status: 200, body: { status: 'ok', workers: 'running' } });

      expect(t.lines).toContain(
        "error: the workers' process ended (signal SIGKILL); starting it again in 1 s",
      );
      // Sent again before the new process polls, not left until its message's visibility ends.
      expect(t.lines).toContain("jobs the dead workers' process held, sent again: 1");
      const [heldView] = await t.waitForJobs([held]);
      expect(await storedText(heldView as JobView)).toContain('v2: held by the dead process');
      const [alive] = childrenOf(process.pid).filter((pid) =>
        commandLineOf(pid).includes('workers-child.ts'),
      );
      expect(again).toBe(`the workers' process runs again (pid ${alive})`);
      expect(alive).not.toBe(dead);
      // The embedded service listens where the stack said it does.
      expect((await fetch(`${t.stack.docgenUrl}/v1.0/templates`)).status).toBe(401);
      const jobId = await postNote('after a restart');
      const [view] = await t.waitForJobs([jobId]);
      expect(await storedText(view as JobView)).toContain('v2: after a restart');
    } finally {
      await writeFile(configPath, configWith('v2'));
    }
  },
);

linuxOnly(
  'fails to start with the child’s message, leaving nothing running, when the emulator cannot start',
  async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'docrelay-e2e-worker-child-fail-'));
    const before = childrenOf(process.pid);
    try {
      const missing = join(dataDir, 'no-such-templates');

      const starting = startTestStack({
        dataDir,
        workers: 'child',
        env: { DOCRELAY_CONFIG: configPath },
        emulator: { templatesDir: missing },
      });

      await expect(starting).rejects.toThrow(new RegExp(`ENOENT.*${missing}`));
      expect(childrenOf(process.pid).filter((pid) => !before.includes(pid))).toEqual([]);
      // The data directory's lock was given back.
      expect(existsSync(join(dataDir, 'stack.pid'))).toBe(false);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  },
);
