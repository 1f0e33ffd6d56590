/**
 * The synthesized Lambda bundles as deployed, against moto: the stack's template is synthesized, its queues,
 * table, buckets and secrets are created on moto from their template properties, and each function's bundle
 * runs in a warm container with the environment its template gives it plus what Lambda itself sets (region,
 * credentials in environment variables only). Nothing in code names an endpoint: AWS_ENDPOINT_URL, the SDK's
 * own variable, points every client at moto. Covers what only runs on AWS: the clients' cached middleware
 * (two invocations per container), the SHA-256 checksum S3 answers for an upload, environment-only
 * credentials, and the jobs API's presigned links.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { App } from 'aws-cdk-lib';
import { loadConfigFileSync } from '../../functions/config/load';
import { signDelivery, signedBody } from '../../functions/senders';
import type { DocRelayFunctionName } from '../../lib/docrelay-function';
import { DocRelayStack } from '../../lib/docrelay-stack';
import { type EmulatorHandle, startEmulator } from '../../local/emulator/server';
import { buildBundles, type LambdaContainer, type Outcome, startContainer } from './lambda-container';
import { type MotoServer, startMotoServer } from './moto-server';
import { deployTemplate, type Template } from './template-deployer';

jest.setTimeout(120_000);
process.env.CDK_VALIDATION = 'false';

const STACK = 'DocRelayMoto';
const REGION = 'eu-west-1';
const ACCOUNT = '123456789012';
const INTEGRATION = 'notes';
const WEBHOOK_SECRET_NAME = 'aws-tier/notes-webhook';
const API_KEY_SECRET_NAME = 'aws-tier/service-api-key';
const WEBHOOK_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'AKIAMOTOTIER', AWS_SECRET_ACCESS_KEY: 'moto-tier-secret' };
const FUNCTIONS: DocRelayFunctionName[] = ['ingest', 'worker', 'jobs-api'];

let moto: MotoServer;
let emulator: EmulatorHandle;
let work: string;
let configPath: string;
let template: Template;
let environments: Map<DocRelayFunctionName, Record<string, string>>;
const containers = new Map<DocRelayFunctionName, LambdaContainer>();
let clients: {
  sqs: SQSClient;
  dynamodb: DynamoDBClient;
  s3: S3Client;
  secretsManager: SecretsManagerClient;
  eventBridge: EventBridgeClient;
};

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'docrelay-aws-tier-'));
  [moto, emulator] = await Promise.all([
    startMotoServer(),
    startEmulator({ apiKey: randomBytes(16).toString('hex'), seed: 37 }),
  ]);
  configPath = join(work, 'docrelay.yaml');
  writeFileSync(
    configPath,
    [
      'service:',
      `  baseUrl: ${emulator.url}`,
      `  apiKeySecret: ${API_KEY_SECRET_NAME}`,
      'integrations:',
      `  - id: ${INTEGRATION}`,
      '    verify:',
      '      scheme: standard-webhooks',
      `      secret: ${WEBHOOK_SECRET_NAME}`,
      '    documents:',
      '      - name: note',
      '        template: { id: "9003" }',
      '        data:',
      '          Title: "data.title"',
      '          Body: "data.body"',
      '',
    ].join('\n'),
  );

  // The stack as `cdk synth` makes it (assets not bundled here: the bundles are built below, as the construct builds them).
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, outdir: join(work, 'cdk.out') });
  const stack = new DocRelayStack(app, STACK, {
    env: { account: ACCOUNT, region: REGION },
    docRelay: { config: loadConfigFileSync(configPath).config },
  });
  template = app.synth().getStackByName(STACK).template as Template;

  const clientConfig = {
    region: REGION,
    endpoint: moto.url,
    credentials: {
      accessKeyId: CREDENTIALS.AWS_ACCESS_KEY_ID,
      secretAccessKey: CREDENTIALS.AWS_SECRET_ACCESS_KEY,
    },
  };
  clients = {
    sqs: new SQSClient(clientConfig),
    dynamodb: new DynamoDBClient(clientConfig),
    s3: new S3Client({ ...clientConfig, forcePathStyle: true }),
    secretsManager: new SecretsManagerClient(clientConfig),
    eventBridge: new EventBridgeClient(clientConfig),
  };
  const deployed = await deployTemplate(template, clients, {
    stackName: STACK,
    region: REGION,
    accountId: ACCOUNT,
  });
  // The config's secrets are imported by name (the construct's default): the operator creates them.
  for (const [name, value] of [
    [API_KEY_SECRET_NAME, emulator.apiKey],
    [WEBHOOK_SECRET_NAME, WEBHOOK_SECRET],
  ]) {
    await clients.secretsManager.send(new CreateSecretCommand({ Name: name, SecretString: value }));
  }

  const dirs = await buildBundles(stack.docRelay.configFile, FUNCTIONS, join(work, 'bundles'));
  environments = new Map();
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const variables = deployed.resolve(
      (resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ??
        {},
    ) as Record<string, string>;
    const fn = FUNCTIONS.find((name) => variables.POWERTOOLS_SERVICE_NAME === `${STACK}-${name}`);
    if (fn === undefined) continue;
    environments.set(fn, {
      ...variables,
      // What the Lambda runtime sets, and AWS_ENDPOINT_URL, the SDK's own variable, pointing at moto.
      AWS_REGION: REGION,
      AWS_DEFAULT_REGION: REGION,
      AWS_LAMBDA_FUNCTION_NAME: logicalId,
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs20.x',
      LAMBDA_TASK_ROOT: dirs.get(fn) as string,
      ...CREDENTIALS,
      AWS_SESSION_TOKEN: 'moto-tier-session',
      AWS_ENDPOINT_URL: moto.url,
      POWERTOOLS_METRICS_DISABLED: 'true',
      PATH: process.env.PATH ?? '',
    });
    containers.set(
      fn,
      startContainer(dirs.get(fn) as string, environments.get(fn) as Record<string, string>),
    );
  }
  expect([...containers.keys()].sort()).toEqual([...FUNCTIONS].sort());
}, 240_000);

afterAll(async () => {
  await Promise.all([...containers.values()].map((container) => container.stop()));
  for (const client of Object.values(clients ?? {})) client.destroy();
  await Promise.all([moto?.stop(), emulator?.stop()]);
  rmSync(work, { recursive: true, force: true });
});

function httpEvent(
  method: string,
  routeKey: string,
  rawPath: string,
  params: Record<string, string>,
  init: {
    headers?: Record<string, string>;
    body?: string;
  } = {},
) {
  return {
    version: '2.0',
    routeKey,
    rawPath,
    rawQueryString: '',
    headers: init.headers ?? {},
    pathParameters: params,
    requestContext: {
      accountId: ACCOUNT,
      apiId: 'moto',
      domainName: `moto.execute-api.${REGION}.amazonaws.com`,
      domainPrefix: 'moto',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'aws-tier' },
      requestId: randomBytes(8).toString('hex'),
      routeKey,
      stage: '$default',
      time: '01/Jan/2030:00:00:00 +0000',
      timeEpoch: Date.now(),
    },
    ...(init.body === undefined ? {} : { body: init.body, isBase64Encoded: false }),
  };
}

/** A delivery signed as its sender signs it (standard-webhooks), as API Gateway hands it to the ingest. */
function signedDelivery(title: string) {
  const verify = loadConfigFileSync(configPath).integrations.get(INTEGRATION)?.config.verify;
  if (verify === undefined) throw new Error('no verify');
  const payload = Buffer.from(
    JSON.stringify({ type: 'note.created', data: { title, body: `written by the aws tier: ${title}` } }),
  );
  const rawPath = `/v1/hooks/${INTEGRATION}`;
  const signing = {
    config: verify,
    secrets: [WEBHOOK_SECRET],
    rawBody: payload,
    now: new Date(),
    url: `https://moto.execute-api.${REGION}.amazonaws.com${rawPath}`,
    method: 'POST',
  };
  const body = signedBody(signing);
  const headers = { 'content-type': 'application/json', ...signDelivery({ ...signing, rawBody: body }) };
  return httpEvent(
    'POST',
    'POST /v1/hooks/{integrationId}',
    rawPath,
    { integrationId: INTEGRATION },
    {
      headers,
      body: body.toString('utf8'),
    },
  );
}

const answer = (outcome: Outcome): { statusCode: number; body: string } => {
  if (!('resolved' in outcome)) throw new Error(`the handler failed: ${JSON.stringify(outcome)}`);
  return outcome.resolved as { statusCode: number; body: string };
};

async function jobItem(jobId: string): Promise<Record<string, unknown> | undefined> {
  const table = environments.get('worker')?.DOCRELAY_TABLE as string;
  const { Item } = await DynamoDBDocumentClient.from(clients.dynamodb).send(
    new GetCommand({ TableName: table, Key: { pk: `job#${jobId}` }, ConsistentRead: true }),
  );
  return Item;
}

/** Receives the jobs queue's messages as the event source mapping would hand them to the worker (bounded). */
async function receiveJobMessages(count: number) {
  const queueUrl = environments.get('worker')?.DOCRELAY_QUEUE_URL as string;
  const queueArn = `arn:aws:sqs:${REGION}:${ACCOUNT}:${queueUrl.split('/').pop()}`;
  const records: unknown[] = [];
  for (let round = 0; round < 20 && records.length < count; round += 1) {
    const { Messages = [] } = await clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    for (const message of Messages) {
      records.push({
        messageId: message.MessageId,
        receiptHandle: message.ReceiptHandle,
        body: message.Body,
        attributes: message.Attributes ?? {},
        messageAttributes: Object.fromEntries(
          Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
            name,
            {
              stringValue: value.StringValue,
              dataType: value.DataType,
              stringListValues: [],
              binaryListValues: [],
            },
          ]),
        ),
        md5OfBody: message.MD5OfBody,
        eventSource: 'aws:sqs',
        eventSourceARN: queueArn,
        awsRegion: REGION,
      });
    }
  }
  return records;
}

const sha256 = (bytes: Uint8Array): Buffer => createHash('sha256').update(bytes).digest();

describe('the bundles as deployed, on moto', () => {
  const jobIds: string[] = [];

  it('ingest: two signed deliveries in one container are accepted, each job recorded and queued', async () => {
    const ingest = containers.get('ingest') as LambdaContainer;
    for (const title of ['first note', 'second note']) {
      const response = answer(await ingest.invoke(signedDelivery(title)));
      expect({
        status: response.statusCode,
        log: response.statusCode === 202 ? '' : ingest.output(),
      }).toEqual({
        status: 202,
        log: '',
      });
      const body = JSON.parse(response.body) as { jobs: Array<{ jobId: string }> };
      expect(body.jobs).toHaveLength(1);
      jobIds.push(body.jobs[0]?.jobId as string);
    }
    for (const jobId of jobIds) expect((await jobItem(jobId))?.status).toBe('queued');
  });

  it('worker: each job, one invocation after the other in one container, is stored with the SHA-256 S3 answers', async () => {
    const worker = containers.get('worker') as LambdaContainer;
    const records = await receiveJobMessages(jobIds.length);
    expect(records).toHaveLength(jobIds.length);
    for (const record of records) {
      const outcome = await worker.invoke({ Records: [record] });
      expect({ outcome, log: 'resolved' in outcome ? '' : worker.output() }).toEqual({
        outcome: { resolved: { batchItemFailures: [] } },
        log: '',
      });
    }
    for (const jobId of jobIds) {
      const job = (await jobItem(jobId)) as {
        status: string;
        files: Array<{ bucket: string; key: string; sha256: string; storedSize: number }>;
      };
      expect(job.status).toBe('stored');
      expect(job.files).toHaveLength(1);
      const [file] = job.files;
      if (file === undefined) throw new Error('no file');
      expect(file.bucket).toBe(environments.get('worker')?.DOCRELAY_BUCKET);
      // The upload asked S3 for a SHA-256 (not the SDK's default CRC32): S3's answer is the job's hash.
      const head = await clients.s3.send(
        new HeadObjectCommand({ Bucket: file.bucket, Key: file.key, ChecksumMode: 'ENABLED' }),
      );
      expect(head.ChecksumSHA256).toBe(Buffer.from(file.sha256, 'hex').toString('base64'));
      const object = await clients.s3.send(new GetObjectCommand({ Bucket: file.bucket, Key: file.key }));
      const bytes = await object.Body?.transformToByteArray();
      expect(bytes?.length).toBe(file.storedSize);
      expect(sha256(bytes ?? new Uint8Array()).toString('hex')).toBe(file.sha256);
    }
  });

  it("jobs API: a stored job's presigned link, from a warm container, downloads the stored bytes", async () => {
    const jobsApi = containers.get('jobs-api') as LambdaContainer;
    for (const jobId of jobIds) {
      const path = `/v1/jobs/${jobId}`;
      const response = answer(
        await jobsApi.invoke(httpEvent('GET', 'GET /v1/jobs/{jobId}', path, { jobId })),
      );
      expect(response.statusCode).toBe(200);
      const view = JSON.parse(response.body) as {
        status: string;
        files: Array<{ downloadUrl?: string; sha256?: string }>;
      };
      expect(view.status).toBe('stored');
      const link = view.files[0]?.downloadUrl ?? '';
      const url = new URL(link);
      expect(url.origin).toBe(moto.url);
      expect(url.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
      expect(url.searchParams.get('X-Amz-Credential')).toMatch(/^AKIAMOTOTIER\//);
      expect(url.searchParams.get('X-Amz-Security-Token')).toBe('moto-tier-session');
      const download = await fetch(link);
      expect(download.status).toBe(200);
      const bytes = new Uint8Array(await download.arrayBuffer());
      expect(sha256(bytes).toString('hex')).toBe(
        ((await jobItem(jobId)) as { files: Array<{ sha256: string }> }).files[0]?.sha256,
      );
    }
  });

  it('credentials come from the environment alone: a profile file and a container endpoint are never asked', async () => {
    // Both would give moto-valid credentials to the SDK's full chain; the bundle's chain is the environment only.
    writeFileSync(
      join(work, 'credentials'),
      '[default]\naws_access_key_id = AKIAPROFILE\naws_secret_access_key = profile-secret\n',
    );
    let asked = 0;
    const endpoint = createServer((_request, response) => {
      asked += 1;
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          AccessKeyId: 'AKIACONTAINER',
          SecretAccessKey: 'container-secret',
          Token: 'token',
          Expiration: new Date(Date.now() + 3_600_000).toISOString(),
        }),
      );
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const { port } = endpoint.address() as AddressInfo;
    const env: Record<string, string> = {
      ...(environments.get('jobs-api') as Record<string, string>),
      AWS_SHARED_CREDENTIALS_FILE: join(work, 'credentials'),
      AWS_CONTAINER_CREDENTIALS_FULL_URI: `http://127.0.0.1:${port}/credentials`,
    };
    delete env.AWS_ACCESS_KEY_ID;
    delete env.AWS_SECRET_ACCESS_KEY;
    delete env.AWS_SESSION_TOKEN;
    const container = startContainer(env.LAMBDA_TASK_ROOT as string, env);
    try {
      const jobId = jobIds[0] as string;
      const path = `/v1/jobs/${jobId}`;
      const response = answer(
        await container.invoke(httpEvent('GET', 'GET /v1/jobs/{jobId}', path, { jobId })),
      );
      expect(response.statusCode).toBe(503);
      expect(container.output()).toMatch(/"code":"JOB_STORE_UNAVAILABLE"/);
      expect(asked).toBe(0);
    } finally {
      await container.stop();
      await new Promise((resolve) => endpoint.close(resolve));
    }
  });
});
