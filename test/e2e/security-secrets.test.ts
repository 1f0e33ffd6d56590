/**
 * Secrets and data (issue 6): `docrelay dev` runs as a child process with every logger at DEBUG, against the
 * service emulator behind a recording proxy (which learns the download tokens). A mix of deliveries runs
 * through it: valid ones for every scheme, refused ones (wrong and stale signatures), a replay, a job that
 * fails on its mapping, rate limits and server errors from the service, and an expired download link. Then
 * no secret value may appear anywhere docrelay writes: its output, the table, S3 keys and metadata, the
 * events file, the dead-letter queue, the job API, its data directory; and the payload is nowhere in clear.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  HeadObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  S3Client,
} from '@aws-sdk/client-s3';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { unpackSeal } from '../../functions/adapters/dynamodb/keys';
import { type EmulatorHandle, startEmulator } from '../../local/emulator/server';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/stack/aws-emulators';
import {
  findLeaks,
  type Haystack,
  type Headers,
  type Needle,
  noteBody,
  type RawResponse,
  rawRequest,
  SEC,
  SECRET_NAMES,
  scanAll,
  securityConfigYaml,
  securityRepoRoot,
  signGithubBody,
  signHmacBody,
  signShopifyBody,
  signSlackBody,
  signStandardBody,
  signStripeBody,
  signTokenBody,
} from './helpers/security-harness';
import { type RecordingProxy, startRecordingProxy } from './helpers/security-proxy';
import { waitForJobs } from './helpers/settle';

jest.setTimeout(90_000);

/** A payload field no rule maps: it must stay sealed everywhere docrelay keeps data. */
const MARKER = `payload-marker-${randomUUID()}`;
const API_KEY = `svc_${randomBytes(24).toString('hex')}`;

interface Endpoints {
  aws: { s3: string; sqs: string; dynamodb: string; bucket: string; dlqUrl: string; table: string };
}

let dataDir: string;
let proxy: RecordingProxy;
let emulator: EmulatorHandle;
let child: ChildProcessByStdio<null, Readable, Readable>;
let exited: Promise<number | null>;
const output: string[] = [];
let apiUrl: string;
let secrets: Record<string, string>;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'docrelay-secrets-'));
  const configPath = join(dataDir, 'security.yaml');
  await writeFile(configPath, securityConfigYaml());
  proxy = await startRecordingProxy();
  emulator = await startEmulator({ apiKey: API_KEY, publicUrl: proxy.url, seed: 7 });
  proxy.setUpstream(`http://127.0.0.1:${emulator.port}`);

  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(DOCGEN_|DOCRELAY_|POWERTOOLS_|AWS_LAMBDA_)/.test(name)) env[name] = value;
  }
  child = spawn(process.execPath, [join(securityRepoRoot, 'bin/docrelay.js'), 'dev'], {
    cwd: securityRepoRoot,
    env: {
      ...env,
      PORT: '0',
      DOCRELAY_DATA_DIR: dataDir,
      DOCRELAY_CONFIG: configPath,
      DOCGEN_BASE_URL: proxy.url,
      DOCGEN_API_KEY: API_KEY,
      // AWS_LAMBDA_LOG_LEVEL wins over the level the local stack gives its loggers.
      AWS_LAMBDA_LOG_LEVEL: 'DEBUG',
      POWERTOOLS_LOG_LEVEL: 'DEBUG',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  apiUrl = await waitFor(
    'the "ready at" line',
    30_000,
    async () => /ready at (http:\/\/\S+)/.exec(output.join(''))?.[1],
  );
  secrets = JSON.parse(await readFile(join(dataDir, 'secrets.json'), 'utf8')) as Record<string, string>;
});

afterAll(async () => {
  if (child !== undefined && child.exitCode === null) {
    child.kill('SIGKILL');
    await exited;
  }
  await emulator?.stop();
  await proxy?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

/** Polls until `probe` gives a value; fails naming `what` after `timeoutMs`. */
async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    if (child.exitCode !== null)
      throw new Error(`docrelay dev exited (${child.exitCode}): ${output.join('')}`);
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

const secret = (name: string): string => {
  const value = secrets[name];
  if (value === undefined) throw new Error(`no secret ${name}`);
  return value;
};

/** Every signature-bearing header value sent, and the MACs inside them. */
const sentSignatures: string[] = [];
const SIGNATURE_HEADERS = [
  'x-hub-signature-256',
  'stripe-signature',
  'x-shopify-hmac-sha256',
  'x-slack-signature',
  'webhook-signature',
  'x-signature',
  'authorization',
];
const refusals: RawResponse[] = [];
const jobViews = new Map<string, string>();

async function send(integration: string, body: Buffer, headers: Headers): Promise<RawResponse> {
  for (const name of SIGNATURE_HEADERS) {
    const value = headers[name];
    if (value === undefined) continue;
    sentSignatures.push(value);
    // The MACs alone, in case something logs a parsed header.
    for (const part of value.split(/[,= ]/)) if (part.length >= 20) sentSignatures.push(part);
  }
  return rawRequest(apiUrl, { path: `/v1/hooks/${integration}`, headers, body });
}

async function accept(integration: string, body: Buffer, headers: Headers): Promise<string> {
  const response = await send(integration, body, headers);
  if (response.status !== 202)
    throw new Error(`expected 202 from ${integration}, got ${response.status}: ${response.text}`);
  const jobs = (JSON.parse(response.text) as { jobs: Array<{ jobId: string }> }).jobs;
  expect(jobs).toHaveLength(1);
  return (jobs[0] as { jobId: string }).jobId;
}

async function settled(jobIds: readonly string[], timeoutMs = 30_000): Promise<Record<string, string>> {
  const views = await waitForJobs(
    async (jobId) => {
      const view = await rawRequest(apiUrl, { method: 'GET', path: `/v1/jobs/${jobId}` });
      jobViews.set(jobId, view.text);
      return JSON.parse(view.text) as { status: string };
    },
    jobIds,
    {
      timeoutMs,
      giveUp: () =>
        child.exitCode === null ? undefined : `docrelay dev exited (${child.exitCode}): ${output.join('')}`,
    },
  );
  return Object.fromEntries(jobIds.map((jobId, i) => [jobId, views[i]?.status ?? '']));
}

const faultCount = (status: (s: number) => boolean): number =>
  emulator.stats().requests.filter((r) => r.fault !== undefined && status(r.status)).length;

const withMarker = (extra: Record<string, unknown> = {}): Buffer =>
  noteBody({ secretMarker: MARKER, ...extra });

describe('secrets never leak', () => {
  const stored: string[] = [];
  let mapFailJob = '';

  it('drives valid, refused, replayed, failing, rate-limited and expired-link deliveries', async () => {
    // Refused: wrong MACs, other secrets, stale timestamps signed with the right secret.
    const wrong = randomBytes(32).toString('hex');
    const other = `dev_${randomBytes(24).toString('hex')}`;
    const refusedRequests: Array<[string, Buffer, Headers]> = [];
    const b = () => withMarker();
    const hourAgo = new Date(Date.now() - 3_600_000);
    let body = b();
    refusedRequests.push([SEC.github, body, { ...signGithubBody(body, other) }]);
    body = b();
    refusedRequests.push([
      SEC.github,
      body,
      { ...signGithubBody(body, secret(SECRET_NAMES.githubNew)), 'x-hub-signature-256': `sha256=${wrong}` },
    ]);
    body = b();
    refusedRequests.push([SEC.stripe, body, signStripeBody(body, secret(SECRET_NAMES.stripe), hourAgo)]);
    body = b();
    refusedRequests.push([SEC.stripe, body, signStripeBody(body, other)]);
    body = b();
    refusedRequests.push([SEC.shopify, body, signShopifyBody(body, other)]);
    body = b();
    refusedRequests.push([SEC.slack, body, signSlackBody(body, secret(SECRET_NAMES.slack), hourAgo)]);
    body = b();
    refusedRequests.push([
      SEC.standard,
      body,
      signStandardBody(body, secret(SECRET_NAMES.standard), `msg_${randomUUID()}`, hourAgo),
    ]);
    body = b();
    refusedRequests.push([
      SEC.standard,
      body,
      signStandardBody(body, `whsec_${randomBytes(24).toString('base64')}`),
    ]);
    body = b();
    refusedRequests.push([SEC.hmac, body, signHmacBody(body, other)]);
    body = b();
    refusedRequests.push([SEC.token, body, signTokenBody(body, `${secret(SECRET_NAMES.token)}0`)]);
    for (const [integration, refusedBody, headers] of refusedRequests) {
      const response = await send(integration, refusedBody, headers);
      expect(response.status).toBe(401);
      refusals.push(response);
    }

    // Rate limits, then server errors, from the service: retried until the jobs are stored.
    emulator.setFaults({ failNext: { count: 2, status: 429 }, retryAfterSeconds: 0 });
    body = withMarker();
    const github = await accept(SEC.github, body, signGithubBody(body, secret(SECRET_NAMES.githubNew)));
    // The same signed body under a new (unsigned) id: a duplicate of the first, nothing new.
    const copied = await send(
      SEC.github,
      body,
      signGithubBody(body, secret(SECRET_NAMES.githubNew), 'copied-under-a-new-id'),
    );
    expect(copied.status).toBe(200);
    // Another delivery, then a replay of it under its own id: answered as a duplicate, nothing new.
    body = withMarker({ delivery: 'replayed' });
    const replay = await send(
      SEC.github,
      body,
      signGithubBody(body, secret(SECRET_NAMES.githubNew), 'replayed-id'),
    );
    expect(replay.status).toBe(202);
    const replayJob = (JSON.parse(replay.text) as { jobs: Array<{ jobId: string }> }).jobs[0]?.jobId ?? '';
    const again = await send(
      SEC.github,
      body,
      signGithubBody(body, secret(SECRET_NAMES.githubNew), 'replayed-id'),
    );
    expect(again.status).toBe(200);
    stored.push(github, replayJob);
    await settled([github, replayJob]);
    expect(faultCount((s) => s === 429)).toBeGreaterThanOrEqual(2);

    emulator.setFaults({ failNext: { count: 2, status: 503 } });
    body = withMarker();
    stored.push(await accept(SEC.stripe, body, signStripeBody(body, secret(SECRET_NAMES.stripe))));
    await settled(stored);
    expect(faultCount((s) => s >= 500)).toBeGreaterThanOrEqual(2);

    const valid: Array<[string, (b: Buffer) => Headers]> = [
      [SEC.shopify, (x) => signShopifyBody(x, secret(SECRET_NAMES.shopify))],
      [SEC.slack, (x) => signSlackBody(x, secret(SECRET_NAMES.slack))],
      [SEC.standard, (x) => signStandardBody(x, secret(SECRET_NAMES.standard))],
      [SEC.hmac, (x) => signHmacBody(x, secret(SECRET_NAMES.hmac))],
      [SEC.token, (x) => signTokenBody(x, secret(SECRET_NAMES.token))],
      [SEC.github, (x) => signGithubBody(x, secret(SECRET_NAMES.githubOld))],
    ];
    for (const [integration, sign] of valid) {
      const next = withMarker();
      stored.push(await accept(integration, next, sign(next)));
    }
    body = withMarker();
    mapFailJob = await accept(SEC.mapFail, body, signGithubBody(body, secret(SECRET_NAMES.mapFail)));
    await settled([...stored, mapFailJob]);

    // An expired link: links die at once until the worker has met one, then live again.
    emulator.setFaults({ linkTtlMs: 0 });
    body = withMarker();
    const expiring = await accept(SEC.standard, body, signStandardBody(body, secret(SECRET_NAMES.standard)));
    await waitFor('a download of an expired link', 20_000, async () =>
      emulator.stats().requests.some((r) => r.path === '/download' && r.status === 404) ? true : undefined,
    );
    emulator.setFaults({ linkTtlMs: 3_600_000 });
    stored.push(expiring);

    const statuses = await settled([...stored, mapFailJob], 45_000);
    expect(statuses).toEqual({
      ...Object.fromEntries(stored.map((id) => [id, 'stored'])),
      [mapFailJob]: 'failed',
    });
    expect(JSON.parse(jobViews.get(mapFailJob) ?? '{}')).toMatchObject({
      error: { code: expect.stringMatching(/^MAPPING_/) },
    });
    // The proxy saw every link: more tokens than documents stored (expired ones too).
    expect(proxy.tokens.size).toBeGreaterThan(stored.length);
  });

  /** Every value that must never appear, named without the value. */
  function needles(): Needle[] {
    const list: Needle[] = [{ what: 'the service API key (DOCGEN_API_KEY)', value: API_KEY }];
    for (const [name, value] of Object.entries(secrets)) {
      list.push({ what: `secret ${name}`, value });
      if (value.startsWith('whsec_'))
        list.push({ what: `secret ${name} without its prefix`, value: value.slice(6) });
    }
    for (const [i, value] of [...new Set(sentSignatures)].entries()) {
      if (value.length >= 16) list.push({ what: `signature header value #${i}`, value });
    }
    for (const [i, token] of [...proxy.tokens].entries())
      list.push({ what: `download token #${i}`, value: token });
    return list;
  }

  it('no secret, signature or download token in the table, S3, events, dead letters, job API or data dir', async () => {
    expect(stored.length).toBeGreaterThan(0);
    const endpoints = JSON.parse(await readFile(join(dataDir, 'endpoints.json'), 'utf8')) as Endpoints;
    const client = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
    const dynamodb = new DynamoDBClient({ ...client, endpoint: endpoints.aws.dynamodb });
    const s3 = new S3Client({ ...client, endpoint: endpoints.aws.s3, forcePathStyle: true });
    const sqs = new SQSClient({ ...client, endpoint: endpoints.aws.sqs });
    try {
      const haystacks: Haystack[] = [];
      const items = await scanAll(dynamodb, endpoints.aws.table);
      for (const item of items)
        haystacks.push({ where: `table item ${String(item.pk)}`, text: JSON.stringify(item) });

      let token: string | undefined;
      const keys: string[] = [];
      for (let page = 0; page < 50; page += 1) {
        const listed: ListObjectsV2CommandOutput = await s3.send(
          new ListObjectsV2Command({ Bucket: endpoints.aws.bucket, ContinuationToken: token }),
        );
        keys.push(...(listed.Contents ?? []).map((o) => o.Key ?? ''));
        token = listed.NextContinuationToken;
        if (token === undefined) break;
      }
      expect(keys.length).toBeGreaterThanOrEqual(stored.length);
      for (const key of keys) {
        const head = await s3.send(new HeadObjectCommand({ Bucket: endpoints.aws.bucket, Key: key }));
        haystacks.push({ where: `S3 object ${key}`, text: JSON.stringify({ key, metadata: head.Metadata }) });
      }

      const events = await readFile(join(dataDir, 'events.jsonl'), 'utf8');
      expect(events).toContain('Document Stored');
      expect(events).toContain('Document Failed');
      haystacks.push({ where: 'events.jsonl', text: events });

      const dead = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: endpoints.aws.dlqUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
        }),
      );
      haystacks.push({ where: 'the dead-letter queue', text: JSON.stringify(dead.Messages ?? []) });

      for (const [jobId, view] of jobViews) haystacks.push({ where: `GET /v1/jobs/${jobId}`, text: view });
      for (const response of refusals) haystacks.push({ where: 'a 401 answer', text: response.text });
      haystacks.push(...(await dataDirFiles(dataDir)));

      expect(findLeaks(needles(), haystacks)).toEqual([]);
      // The search itself finds what is there (the tokens are in the proxy's transcript).
      expect(
        findLeaks(needles(), [{ where: 'proxy', text: proxy.answers.join('\n') }]).length,
      ).toBeGreaterThan(0);

      // The payload is nowhere in clear: not in any item (its sealed form included), while the jobs stored.
      expect(findLeaks([{ what: 'the payload marker', value: MARKER }], haystacks)).toEqual([]);
      const deliveries = items.filter((item) => item.kind === 'delivery');
      expect(deliveries.length).toBeGreaterThanOrEqual(stored.length);
      for (const delivery of deliveries) {
        // Kept packed (the seal's body as bytes): its raw bytes and its text form both hide the marker.
        expect(delivery.sealedPayload).toBeInstanceOf(Uint8Array);
        expect(Buffer.from(delivery.sealedPayload as Uint8Array).toString('latin1')).not.toContain(MARKER);
        const sealed = unpackSeal(delivery.sealedPayload);
        expect(sealed).not.toContain(MARKER);
        expect(Buffer.from(sealed, 'base64').toString('latin1')).not.toContain(MARKER);
        expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.toContain(MARKER);
      }
      // Job records hold ids, status and errors, never the payload or its headers.
      const jobItems = items.filter((item) => typeof item.jobId === 'string' && item.status !== undefined);
      expect(jobItems.length).toBeGreaterThanOrEqual(stored.length + 1);
      for (const job of jobItems) {
        for (const field of ['payload', 'body', 'bodyText', 'headers', 'sealedPayload']) {
          expect(Object.keys(job)).not.toContain(field);
        }
      }
    } finally {
      dynamodb.destroy();
      s3.destroy();
      sqs.destroy();
    }
  });

  it('no secret, signature, download token or payload in anything docrelay dev printed at DEBUG', async () => {
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      exited,
      new Promise<'timeout'>((r) => {
        timer = setTimeout(() => r('timeout'), 15_000);
      }),
    ]);
    clearTimeout(timer);
    expect(code).toBe(0);
    const printed = output.join('');
    // The capture is real: the handlers' JSON lines (docrelay logs nothing at DEBUG yet), and the jobs by id.
    expect(printed).toMatch(/"level":"INFO"/);
    expect(printed).toMatch(/"level":"WARN"/);
    for (const jobId of stored) expect(printed).toContain(jobId);

    expect(findLeaks(needles(), [{ where: 'docrelay dev output', text: printed }])).toEqual([]);
    expect(
      findLeaks(
        [{ what: 'the payload marker', value: MARKER }],
        [{ where: 'docrelay dev output', text: printed }],
      ),
    ).toEqual([]);
  });
});

/** Every file of the data directory but the secrets file (the local S3 and table data, endpoints, events). */
async function dataDirFiles(dir: string): Promise<Haystack[]> {
  const found: Haystack[] = [];
  const walk = async (at: string, depth: number): Promise<void> => {
    if (depth > 12) return;
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) await walk(path, depth + 1);
      else if (
        entry.isFile() &&
        entry.name !== 'secrets.json' &&
        (await stat(path)).size < 20 * 1024 * 1024
      ) {
        found.push({
          where: `file ${path.slice(dir.length + 1)}`,
          text: (await readFile(path)).toString('latin1'),
        });
      }
    }
  };
  await walk(dir, 0);
  return found;
}
