/**
 * The local stack for e2e tests: started in-process on loopback with a fresh data directory (or a given one,
 * to restart on the same data), with small visibility timeouts and backoff so retries are quick, plus the
 * clients and probes the tests use: post a signed webhook, read a job over the API, wait for jobs to settle,
 * read S3 objects, count queue messages and drain the dead-letter queue.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { type LocalSettings, readLocalSettings } from '../../../functions/commons/env';
import type { JobView } from '../../../functions/core/job-view';
import type { EmulatorHandle } from '../../../local/emulator/server';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../../local/stack/aws-emulators';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../../local/stack/local-stack';
import { waitForJobs } from './settle';
import type { WaitOptions } from './wait';
import { signGithub } from './webhooks';

/** The repository root (config/, bin/). */
export const repoRoot = resolve(__dirname, '../../..');

/** A sample payload of config/samples/, as bytes. */
export const readSample = (name: string): Promise<Buffer> => readFile(join(repoRoot, 'config/samples', name));

/** Hex SHA-256 of some bytes. */
export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Options of a test stack: the local stack's, plus where its data lives and extra environment. */
export interface TestStackOptions extends Omit<LocalStackOptions, 'settings'> {
  /** Reuse this data directory (a restart); else a fresh temporary one. */
  readonly dataDir?: string;
  /** Extra environment for readLocalSettings (DOCGEN_BASE_URL, DOCGEN_API_KEY, DOCRELAY_CONFIG...). */
  readonly env?: Readonly<Record<string, string>>;
}

/** An HTTP answer, its JSON body parsed. */
export interface Answer<T = unknown> {
  readonly status: number;
  readonly contentType: string;
  readonly body: T;
}

/** The answer to a webhook (product-spec.md). */
export interface HookBody {
  deliveryId: string;
  jobs: Array<{ jobId: string; rule: string }>;
  duplicate?: true;
}

/** A stored S3 object, read back through the SDK. */
export interface StoredObject {
  readonly bytes: Buffer;
  readonly contentType: string | undefined;
  readonly metadata: Record<string, string>;
}

/** A running test stack. */
export interface TestStack {
  readonly stack: LocalStack;
  readonly url: string;
  readonly dataDir: string;
  readonly settings: LocalSettings;
  /** Every console line the stack printed. */
  readonly lines: string[];
  /** The embedded service emulator (throws when the stack uses an external service or runs it in its workers' child). */
  readonly emulator: EmulatorHandle;
  readonly s3: S3Client;
  readonly sqs: SQSClient;
  /** A development secret's value, from the stack's secrets file. */
  secret(name: string): Promise<string>;
  /** POSTs a body to `/v1/hooks/{integrationId}` with the given headers. */
  post(integrationId: string, body: Buffer, headers: Record<string, string>): Promise<Answer<HookBody>>;
  /** POSTs a GitHub webhook signed with the dev secret (a fresh delivery id unless given). */
  postGithub(body: Buffer, deliveryId?: string): Promise<Answer<HookBody>>;
  /** GET /v1/jobs/{jobId}. */
  getJob(jobId: string): Promise<Answer<JobView>>;
  /** GET /v1/jobs{query} (e.g. `?integration=x`): the jobs, newest first. */
  getJobs(query?: string): Promise<{ jobs: JobView[]; cursor?: string }>;
  /** Waits until every job is final (stored or failed) and returns their views, in the order given. */
  waitForJobs(jobIds: readonly string[], options?: WaitOptions): Promise<JobView[]>;
  /** Reads an object from the local S3. */
  readObject(bucket: string, key: string): Promise<StoredObject>;
  /** Messages of the jobs queue: visible, in flight and delayed. */
  queueCounts(): Promise<{ visible: number; inFlight: number; delayed: number }>;
  /** Receives and deletes every message now in the dead-letter queue. */
  drainDeadLetters(): Promise<Message[]>;
  /** Stops the stack, keeping its data directory (for a restart). */
  stop(): Promise<void>;
  /** Stops the stack and removes its data directory. */
  dispose(): Promise<void>;
}

/** What a test needs to send to a stack's API, wherever the stack runs: its secrets, requests, webhooks. */
export interface StackHttp {
  /** A development secret's value, from the stack's secrets file. */
  secret(name: string): Promise<string>;
  /** One request to the API, its body parsed as JSON when it is JSON. */
  request<T>(
    method: string,
    path: string,
    body?: Buffer,
    headers?: Record<string, string>,
  ): Promise<Answer<T>>;
  /** POSTs a body to `/v1/hooks/{integrationId}` with the given headers. */
  post(integrationId: string, body: Buffer, headers: Record<string, string>): Promise<Answer<HookBody>>;
}

/** The HTTP side of a stack at `url` whose development secrets are in `secretsFile`. */
export function stackHttp(url: string, secretsFile: string): StackHttp {
  let secrets: Record<string, string> | undefined;
  const secret = async (name: string): Promise<string> => {
    secrets ??= JSON.parse(await readFile(secretsFile, 'utf8')) as Record<string, string>;
    const value = secrets[name];
    if (value === undefined) throw new Error(`no secret ${name} in ${secretsFile}`);
    return value;
  };
  const request = async <T>(
    method: string,
    path: string,
    body?: Buffer,
    headers: Record<string, string> = {},
  ): Promise<Answer<T>> => {
    const response = await fetch(`${url}${path}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // Not JSON: the text as it came.
    }
    return {
      status: response.status,
      contentType: response.headers.get('content-type') ?? '',
      body: parsed as T,
    };
  };
  const post = (integrationId: string, body: Buffer, headers: Record<string, string>) =>
    request<HookBody>('POST', `/v1/hooks/${encodeURIComponent(integrationId)}`, body, headers);
  return { secret, request, post };
}

/** Starts the local stack for a test: loopback only, PORT 0, quick retries, quiet logs. */
export async function startTestStack(options: TestStackOptions = {}): Promise<TestStack> {
  const { dataDir: givenDir, env, ...stackOptions } = options;
  const dataDir = givenDir ?? (await mkdtemp(join(tmpdir(), 'docrelay-e2e-')));
  const settings = readLocalSettings({ PORT: '0', DOCRELAY_DATA_DIR: dataDir, ...env }, repoRoot);
  const lines: string[] = [];
  const stack = await startLocalStack({
    visibilityTimeoutSeconds: 3,
    maxReceiveCount: 5,
    retryBaseSeconds: 1,
    logLevel: 'SILENT',
    ...stackOptions,
    settings,
    onLine: (line) => {
      lines.push(line);
      stackOptions.onLine?.(line);
    },
  });
  const clientBase = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const s3 = new S3Client({
    ...clientBase,
    endpoint: stack.aws.endpoints.s3,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const sqs = new SQSClient({ ...clientBase, endpoint: stack.aws.endpoints.sqs });
  const { secret, request, post } = stackHttp(stack.url, settings.secretsFile);
  const getJob = (jobId: string) => request<JobView>('GET', `/v1/jobs/${encodeURIComponent(jobId)}`);
  const getJobs = async (query = ''): Promise<{ jobs: JobView[]; cursor?: string }> => {
    const answer = await request<{ jobs: JobView[]; cursor?: string }>('GET', `/v1/jobs${query}`);
    if (answer.status !== 200) throw new Error(`GET /v1/jobs${query} answered ${answer.status}`);
    return answer.body;
  };
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    s3.destroy();
    sqs.destroy();
    await stack.stop();
  };
  return {
    stack,
    url: stack.url,
    dataDir,
    settings,
    lines,
    get emulator(): EmulatorHandle {
      if (stack.emulator === undefined)
        throw new Error(
          stack.docgen === 'external'
            ? 'this stack uses an external service'
            : "this stack's service emulator runs in its workers' process",
        );
      return stack.emulator;
    },
    s3,
    sqs,
    secret,
    post,
    postGithub: async (body, deliveryId) =>
      post('github-releases', body, signGithub(body, await secret('docrelay/github-webhook'), deliveryId)),
    getJob,
    getJobs,
    waitForJobs: (jobIds, waitOptions) =>
      waitForJobs(
        async (jobId) => {
          const answer = await getJob(jobId);
          if (answer.status !== 200) throw new Error(`GET /v1/jobs/${jobId}: ${answer.status}`);
          return answer.body;
        },
        jobIds,
        {
          ...waitOptions,
          describe: (views) =>
            JSON.stringify(
              views.map((v) => ({
                jobId: v?.jobId,
                status: v?.status,
                attempts: v?.attempts,
                lastError: v?.lastError,
              })),
            ),
        },
      ),
    readObject: async (bucket, key) => {
      const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      const bytes = Buffer.from((await object.Body?.transformToByteArray()) ?? []);
      return { bytes, contentType: object.ContentType, metadata: object.Metadata ?? {} };
    },
    queueCounts: async () => {
      const result = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: stack.aws.queueUrl,
          AttributeNames: [
            'ApproximateNumberOfMessages',
            'ApproximateNumberOfMessagesNotVisible',
            'ApproximateNumberOfMessagesDelayed',
          ],
        }),
      );
      const count = (name: string): number => Number(result.Attributes?.[name as never] ?? 0);
      return {
        visible: count('ApproximateNumberOfMessages'),
        inFlight: count('ApproximateNumberOfMessagesNotVisible'),
        delayed: count('ApproximateNumberOfMessagesDelayed'),
      };
    },
    drainDeadLetters: async () => {
      const all: Message[] = [];
      for (let round = 0; round < 20; round += 1) {
        const received = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: stack.aws.dlqUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 0,
            VisibilityTimeout: 30,
            MessageAttributeNames: ['All'],
          }),
        );
        const messages = received.Messages ?? [];
        if (messages.length === 0) break;
        all.push(...messages);
        await sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: stack.aws.dlqUrl,
            Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle ?? '' })),
          }),
        );
      }
      return all;
    },
    stop,
    dispose: async () => {
      await stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
