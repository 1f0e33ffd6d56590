/**
 * The worker's CPU per document (issue 17 item 4): one whole job, as the worker runs it on Lambda (claim the
 * job in DynamoDB, read the delivery, open the payload, map, create the document at the service, checkpoint,
 * download, stream into S3 and check it, mark the file and the job stored, publish the event), measured as
 * CPU time (`process.cpuUsage`) per document in batches, against the floor any relay pays for the same
 * document: one POST create, one GET download piped into one PUT to S3, with `node:http`, in the same run.
 *
 * Both sides talk HTTP over loopback to one in-process fake that answers the bytes the service emulator
 * answered (recorded once at start: template 9001 "Invoice", its create answer, its generated file) and
 * takes S3 PUTs and HEADs, so the service's and S3's own work is the same few microseconds on both sides and
 * the CPU counted is the client's. DynamoDB and EventBridge are SDK clients answered in process
 * (bench/instant-aws.ts): the SDK builds, signs and parses each call, only the network is gone (the floor has
 * no such calls: they are part of what the ratio shows). The job and its delivery are the ones a real ingest
 * wrote for a signed Stripe `invoice.paid` webhook (config/docrelay.yaml, integration stripe-invoices).
 *
 * Two subjects: `processJob` (the core over the real adapters), and the Lambda handler (middy, Powertools'
 * batch processor, logger and metrics around it, one SQS record). Logs SILENT, metrics disabled.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import {
  Agent,
  createServer,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Context, SQSEvent } from 'aws-lambda';
import { createS3Client } from '../functions/adapters/aws-clients';
import { StaticSecretSource } from '../functions/adapters/memory/secret-source';
import { encodeJobMessage } from '../functions/adapters/sqs/job-message';
import { createObservability } from '../functions/commons/observability';
import { loadConfigFile } from '../functions/config/load';
import { acceptWebhook } from '../functions/core/accept-delivery';
import { processJob } from '../functions/core/process-job';
import { makeWorkerHandler, type WorkerHandlerDeps } from '../functions/handlers/worker/make-handler';
import { senderScheme } from '../functions/senders/registry';
import { buildIngestDeps } from '../functions/wiring/ingest';
import { buildWorkerDeps } from '../functions/wiring/worker';
import { startEmulator } from '../local/emulator/server';
import { localContext } from '../local/stack/lambda-context';
import { lastJsonLine, runTsChild } from './child';
import { summarizeProfileFile } from './cpu-profile';
import { calibrate, compare, fmt, perCallCpu } from './harness';
import { type InstantTable, instantAwsClients } from './instant-aws';
import { comparisonRow, type ResultRow } from './results';

const ROOT = resolve(__dirname, '..');
const BUCKET = 'bench-documents';
const API_KEY = 'bench-api-key';
const SECRETS = {
  'docrelay/service-api-key': API_KEY,
  'docrelay/sealing-key': 'bench-sealing-secret-0123456789abcdef',
  'docrelay/stripe-webhook': 'whsec_benchstripesecret0123456789',
} as const;

/** Options of the worker CPU benchmark. */
export interface WorkerCpuOptions {
  readonly rounds: number;
  /** Target duration of one measured batch. */
  readonly batchMs: number;
  /** Documents of the CPU profile (bench/profile-worker.ts, its own process); 0 for none. @default 300 */
  readonly profileDocuments?: number;
}

/** One recorded answer of the service. */
interface Recorded {
  readonly status: number;
  readonly contentType: string;
  readonly body: Buffer;
}

/** What the service emulator answered for one document of template 9001, to be replayed by the fake. */
interface ServiceRecording {
  readonly template: Recorded;
  readonly created: Recorded;
  readonly file: Recorded;
  /** The path (and query) of the file's download link. */
  readonly downloadPath: string;
}

const readAll = async (stream: AsyncIterable<Buffer>): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
};

/** Generates one document at the real emulator and keeps its answers (the emulator then stops). */
async function recordService(data: unknown): Promise<ServiceRecording> {
  const emulator = await startEmulator({ apiKey: API_KEY });
  try {
    const headers = { 'x-api-key': API_KEY, accept: 'application/json' };
    const answer = async (response: Response): Promise<Recorded> => ({
      status: response.status,
      contentType: response.headers.get('content-type') ?? 'application/octet-stream',
      body: Buffer.from(await response.arrayBuffer()),
    });
    const template = await answer(await fetch(`${emulator.url}/v1.0/templates/9001`, { headers }));
    const createdAnswer = await answer(
      await fetch(`${emulator.url}/v1.0/templates/9001/documents`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ data }),
      }),
    );
    const link = /"(https?:\/\/[^"]+)"/.exec(createdAnswer.body.toString('utf8').replaceAll('\\/', '/'))?.[1];
    if (link === undefined || createdAnswer.status >= 300) {
      throw new Error(`the emulator's create answered ${createdAnswer.status} without a link`);
    }
    const file = await answer(await fetch(link));
    const url = new URL(link);
    return {
      template,
      // Links point at the fake: the origin is swapped when it starts.
      created: { ...createdAnswer, body: Buffer.from(createdAnswer.body.toString('utf8')) },
      file,
      downloadPath: `${url.pathname}${url.search}`,
    };
  } finally {
    await emulator.stop();
  }
}

/** The fake service and S3: answers the recorded bytes; takes PUTs (drained) and answers HEADs. */
async function startFake(
  recording: ServiceRecording,
  emulatorOrigin: RegExp,
): Promise<{ url: string; server: Server }> {
  let created = recording.created.body;
  const send = (res: ServerResponse, recorded: Recorded): void => {
    res.writeHead(recorded.status, {
      'content-type': recorded.contentType,
      'content-length': String(recorded.body.length),
    });
    res.end(recorded.body);
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    void readAll(req).then(() => {
      if (req.method === 'GET' && path === '/v1.0/templates/9001') return send(res, recording.template);
      if (req.method === 'POST' && path.startsWith('/v1.0/templates/9001/documents')) {
        return send(res, { ...recording.created, body: created });
      }
      if (req.method === 'GET' && path === recording.downloadPath) return send(res, recording.file);
      if (req.method === 'PUT' && path.startsWith(`/${BUCKET}/`)) {
        res.writeHead(200, { etag: '"bench"', 'content-length': '0' });
        return res.end();
      }
      if (req.method === 'HEAD' && path.startsWith(`/${BUCKET}/`)) {
        res.writeHead(200, {
          etag: '"bench"',
          'content-length': String(recording.file.body.length),
          'content-type': recording.file.contentType,
          'last-modified': new Date(0).toUTCString(),
        });
        return res.end();
      }
      res.writeHead(404, { 'content-length': '0' });
      res.end();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  created = Buffer.from(recording.created.body.toString('utf8').replace(emulatorOrigin, url));
  return { url, server };
}

/** The floor: the same three HTTP calls, bare (`node:http`, keep-alive, no SDK, no checks). */
function bareRelay(base: string, createBody: Buffer): () => Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const origin = new URL(base);
  const call = (
    method: string,
    path: string,
    headers: Record<string, string>,
    body?: Buffer | IncomingMessage,
  ): Promise<IncomingMessage> =>
    new Promise((done, fail) => {
      const req = request({ agent, host: origin.hostname, port: origin.port, method, path, headers }, done);
      req.on('error', fail);
      if (body === undefined) req.end();
      else if (Buffer.isBuffer(body)) req.end(body);
      else body.pipe(req);
    });
  return async () => {
    const created = await call(
      'POST',
      '/v1.0/templates/9001/documents',
      {
        'x-api-key': API_KEY,
        'content-type': 'application/json; charset=utf-8',
        'content-length': String(createBody.length),
      },
      createBody,
    );
    const text = (await readAll(created)).toString('utf8').replaceAll('\\/', '/');
    const link = new URL(/"(https?:\/\/[^"]+)"/.exec(text)?.[1] ?? '');
    const download = await call('GET', `${link.pathname}${link.search}`, {});
    const put = await call(
      'PUT',
      `/${BUCKET}/bench/${randomUUID()}/invoice.docx`,
      {
        'content-type': download.headers['content-type'] ?? 'application/octet-stream',
        'content-length': download.headers['content-length'] ?? '0',
      },
      download,
    );
    await readAll(put);
    if (put.statusCode !== 200) throw new Error(`the bare PUT answered ${put.statusCode}`);
  };
}

/** The benchmark's operations, each storing one document, and what to close afterwards. */
export interface WorkerBench {
  /** `processJob` over the real adapters. */
  readonly viaCore: () => Promise<void>;
  /** The worker Lambda handler with one SQS record. */
  readonly viaHandler: () => Promise<void>;
  /** The bare create + download + PUT. */
  readonly floor: () => Promise<void>;
  /** Bytes of the generated file. */
  readonly fileBytes: number;
  /** The worker's dependencies and the job, for breakdowns by step. */
  readonly deps: WorkerHandlerDeps;
  readonly jobId: string;
  close(): Promise<void>;
}

/** Sets the benchmark up: the ingested job, the recorded service, the fake, the worker's dependencies. */
export async function prepareWorkerBench(): Promise<WorkerBench> {
  // Powertools reads this from the environment only; EMF lines would go to stdout once per invocation.
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  const config = await loadConfigFile(join(ROOT, 'config', 'docrelay.yaml'));
  const secrets = new StaticSecretSource(SECRETS);
  const table: InstantTable = new Map();
  const aws = instantAwsClients({ table });

  // A real ingest of one signed Stripe webhook writes the delivery and its job into the instant table.
  const ingest = buildIngestDeps({
    config,
    secrets,
    dynamodb: aws.dynamodb,
    sqs: aws.sqs,
    tableName: 'bench-table',
    queueUrl: 'https://sqs.us-east-1.amazonaws.com/000000000000/bench',
    sealingSecretName: 'docrelay/sealing-key',
  });
  const rawBody = readFileSync(join(ROOT, 'config', 'samples', 'stripe-invoice-paid.json'));
  const signature = senderScheme('stripe')?.sign({
    config: { scheme: 'stripe', secret: 'docrelay/stripe-webhook' },
    secrets: [SECRETS['docrelay/stripe-webhook']],
    rawBody,
    now: new Date(),
  });
  const accepted = await acceptWebhook(ingest, {
    integrationId: 'stripe-invoices',
    headers: { 'content-type': 'application/json', ...signature },
    rawBody,
    query: {},
    method: 'POST',
    url: 'https://hooks.example.test/v1/hooks/stripe-invoices',
  });
  const jobId = /"jobId":"([^"]+)"/.exec(JSON.stringify(accepted))?.[1];
  if (accepted.status !== 202 || jobId === undefined) {
    throw new Error(`the ingest answered ${accepted.status}: ${JSON.stringify(accepted)}`);
  }

  // The service's answers for the document this job asks for (the data as the rule maps the sample).
  const mappedData = {
    'Customer Name': 'Bench Customer',
    'Invoice Number': 'BENCH-0001',
    Amount: 129.5,
    'Due Date': '2024-06-30',
    Currency: 'EUR',
    Paid: true,
  };
  const recording = await recordService(mappedData);
  const emulatorOrigin = /http:\/\/127\.0\.0\.1:\d+/g;
  const fake = await startFake(recording, emulatorOrigin);
  const s3 = createS3Client({
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDBENCH', secretAccessKey: 'bench-secret' },
    endpoints: { s3: fake.url },
  });
  const deps = buildWorkerDeps({
    config,
    secrets,
    dynamodb: aws.dynamodb,
    sqs: aws.sqs,
    s3,
    eventBridge: aws.eventBridge,
    eventBusName: 'bench-bus',
    tableName: 'bench-table',
    queueUrl: 'https://sqs.us-east-1.amazonaws.com/000000000000/bench',
    dlqUrl: 'https://sqs.us-east-1.amazonaws.com/000000000000/bench-dlq',
    bucket: BUCKET,
    sealingSecretName: 'docrelay/sealing-key',
    maxReceiveCount: 5,
    leaseMs: 60_000,
    docgenBaseUrl: fake.url,
  });
  const observability = createObservability('worker', { logLevel: 'SILENT' });
  const handler = makeWorkerHandler(deps, observability);
  const worker = { ...deps.worker, log: observability.logger };
  const messageBody = encodeJobMessage(jobId);
  const context: Context = localContext('worker', 300_000);

  const viaCore = async (): Promise<void> => {
    const outcome = await processJob(worker, jobId, { messageId: randomUUID(), receiveCount: 1 });
    if (outcome.kind !== 'stored') throw new Error(`processJob ended ${JSON.stringify(outcome)}`);
  };
  const viaHandler = async (): Promise<void> => {
    const event: SQSEvent = {
      Records: [
        {
          messageId: randomUUID(),
          receiptHandle: 'bench',
          body: messageBody,
          attributes: {
            ApproximateReceiveCount: '1',
            SentTimestamp: String(Date.now()),
            SenderId: '000000000000',
            ApproximateFirstReceiveTimestamp: String(Date.now()),
          },
          messageAttributes: {},
          md5OfBody: '',
          eventSource: 'aws:sqs',
          eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:bench',
          awsRegion: 'us-east-1',
        },
      ],
    };
    const response = await handler(event, context);
    if ((response?.batchItemFailures ?? []).length > 0) throw new Error('the worker handler failed the job');
  };
  const floor = bareRelay(fake.url, Buffer.from(JSON.stringify({ data: mappedData })));
  return {
    viaCore,
    viaHandler,
    floor,
    fileBytes: recording.file.body.length,
    deps,
    jobId,
    close: async () => {
      aws.destroy();
      s3.destroy();
      fake.server.closeAllConnections();
      await new Promise<void>((done) => fake.server.close(() => done()));
    },
  };
}

/** Runs the benchmark: one row per subject, each against the floor. */
export async function runWorkerCpu(options: WorkerCpuOptions): Promise<ResultRow[]> {
  const bench = await prepareWorkerBench();
  const { viaCore, viaHandler, floor } = bench;
  const rows: ResultRow[] = [];
  try {
    // Checked once outside the timing: each side stores the document for real.
    await viaCore();
    await viaHandler();
    await floor();
    const floorBatch = await calibrate(floor, options.batchMs);
    for (const [name, subject] of [
      ['processJob (core + adapters + SDK)', viaCore],
      ['Lambda handler (middy, Powertools, SQS record)', viaHandler],
    ] as const) {
      const batch = await calibrate(subject, options.batchMs);
      const run = await compare({
        rounds: options.rounds,
        subject: perCallCpu(subject, batch),
        baseline: perCallCpu(floor, floorBatch),
      });
      rows.push(
        comparisonRow(
          {
            benchmark: 'worker',
            case: `${name}, 1 file of ${bench.fileBytes} B`,
            metric: 'CPU µs per document vs bare create+download+PUT (node:http)',
            unit: 'µs',
          },
          run,
        ),
      );
    }
  } finally {
    await bench.close();
  }
  const documents = options.profileDocuments ?? 300;
  if (documents > 0) rows.push(await profileRow(documents));
  return rows;
}

/** Profiles the handler over `documents` in a fresh process; a row with the top packages by self time. */
async function profileRow(documents: number): Promise<ResultRow> {
  const dir = await mkdtemp(join(tmpdir(), 'docrelay-bench-worker-prof-'));
  try {
    const file = join(dir, 'worker.cpuprofile');
    const out = await runTsChild('bench/profile-worker.ts', [String(documents), file], {
      timeoutMs: 300_000,
    });
    const measured = lastJsonLine(out) as { cpuUsPerDocument?: number };
    const profile = await summarizeProfileFile(file, 25);
    return {
      benchmark: 'worker',
      case: `CPU profile of the Lambda handler, ${documents} documents (main thread, self time)`,
      metric: 'top self time (package)',
      subject: `${profile.packages
        .slice(0, 5)
        .map((entry) => `${entry.name} ${entry.percent.toFixed(0)}%`)
        .join(', ')}; ${fmt((measured.cpuUsPerDocument ?? Number.NaN) / 1000)} ms CPU/document`,
      data: { ...profile, cpuUsPerDocument: measured.cpuUsPerDocument },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
