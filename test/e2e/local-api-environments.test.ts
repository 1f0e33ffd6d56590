/**
 * The local API runs each request in a Lambda execution environment of its own, as Lambda would
 * (local/stack/lambda-environments.ts). Concurrent webhooks to `docrelay dev --json-logs` each log under their
 * own request id, and Powertools finds each request's metrics at its end: no "No application metrics to
 * publish" warning on the console (which one handler shared by concurrent requests printed for about half of
 * them).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DevProcess, startDevProcess } from './helpers/dev-process';
import { readSample } from './helpers/stack';
import { waitUntil } from './helpers/wait';
import { signGithub } from './helpers/webhooks';

jest.setTimeout(60_000);

const WEBHOOKS = 12;

let dataDir: string;
let dev: DevProcess | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'docrelay-e2e-environments-'));
});

afterAll(async () => {
  await dev?.stop('SIGKILL');
  await rm(dataDir, { recursive: true, force: true });
});

interface AcceptedLine {
  readonly message: string;
  readonly deliveryId: string;
  readonly function_request_id: string;
}

/** The ingest's `delivery accepted` lines among the JSON log lines printed so far (whole lines only). */
const acceptedLines = (output: string): AcceptedLine[] =>
  output
    .split('\n')
    .slice(0, -1)
    .filter((line) => line.startsWith('{') && line.includes('"delivery accepted"'))
    .map((line) => JSON.parse(line) as AcceptedLine)
    .filter((line) => line.message === 'delivery accepted');

it('logs concurrent webhooks each under its own request id, with no Powertools warning', async () => {
  dev = await startDevProcess(dataDir, {}, ['--json-logs']);
  const secrets = JSON.parse(await readFile(join(dataDir, 'secrets.json'), 'utf8')) as Record<string, string>;
  const secret = secrets['docrelay/github-webhook'] as string;
  const sample = JSON.parse((await readSample('github-release-published.json')).toString('utf8')) as {
    release: { id: number };
  };

  const statuses = await Promise.all(
    Array.from({ length: WEBHOOKS }, async (_, i) => {
      // Another release each: the same body again would be a duplicate of the first.
      const body = Buffer.from(
        JSON.stringify({ ...sample, release: { ...sample.release, id: sample.release.id + i } }),
      );
      const response = await fetch(`${dev?.url}/v1/hooks/github-releases`, {
        method: 'POST',
        headers: signGithub(body, secret),
        body,
      });
      await response.arrayBuffer();
      return response.status;
    }),
  );
  expect(statuses).toEqual(Array.from({ length: WEBHOOKS }, () => 202));

  const accepted = await waitUntil(
    `${WEBHOOKS} "delivery accepted" log lines`,
    async () => {
      const lines = acceptedLines(dev?.output() ?? '');
      return lines.length >= WEBHOOKS ? lines : undefined;
    },
    { describe: () => dev?.output() ?? '' },
  );
  expect(new Set(accepted.map((line) => line.deliveryId)).size).toBe(WEBHOOKS);
  expect(new Set(accepted.map((line) => line.function_request_id)).size).toBe(WEBHOOKS);
  expect(dev.output()).not.toContain('No application metrics');

  expect(await dev.stop('SIGINT')).toEqual({ code: 0, signal: null });
});
