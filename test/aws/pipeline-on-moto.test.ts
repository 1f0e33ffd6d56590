/**
 * The synthesized Lambda bundles as deployed, against moto: the stack's template is synthesized, its queues,
 * table, buckets and secrets are created on moto from their template properties, and each function's bundle
 * runs in a warm container with the environment its template gives it plus what Lambda itself sets (region,
 * credentials in environment variables only). Nothing in code names an endpoint: AWS_ENDPOINT_URL, the SDK's
 * own variable, points every client at moto. Covers what only runs on AWS: the clients' cached middleware
 * (two invocations per container), the SHA-256 checksum S3 answers for an upload, environment-only
 * credentials, and the jobs API's presigned links.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { GetObjectCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DocRelayFunctionName } from '../../lib/docrelay-function';
import { deployOnMoto, httpEvent, type MotoDeployment } from './deployed-stack';
import { type LambdaContainer, startContainer } from './lambda-container';
import { httpAnswer, receiveJobMessages, signedDelivery, sqsRecord } from './lambda-events';

jest.setTimeout(120_000);

const STACK = 'DocRelayMoto';
const FUNCTIONS: DocRelayFunctionName[] = ['ingest', 'worker', 'jobs-api'];

let stack: MotoDeployment;

beforeAll(async () => {
  stack = await deployOnMoto(STACK, FUNCTIONS);
}, 240_000);

afterAll(async () => {
  await stack?.stop();
});

async function jobItem(jobId: string): Promise<Record<string, unknown> | undefined> {
  const table = stack.environments.get('worker')?.DOCRELAY_TABLE as string;
  const { Item } = await DynamoDBDocumentClient.from(stack.clients.dynamodb).send(
    new GetCommand({ TableName: table, Key: { pk: `job#${jobId}` }, ConsistentRead: true }),
  );
  return Item;
}

/** Receives the jobs queue's messages as the event source mapping hands them to the worker (bounded). */
async function receiveJobRecords(count: number) {
  const records: unknown[] = [];
  for (let round = 0; round < 20 && records.length < count; round += 1) {
    for (const message of await receiveJobMessages(stack)) records.push(sqsRecord(stack, message));
  }
  return records;
}

const sha256 = (bytes: Uint8Array): Buffer => createHash('sha256').update(bytes).digest();

describe('the bundles as deployed, on moto', () => {
  const jobIds: string[] = [];

  it('ingest: two signed deliveries in one container are accepted, each job recorded and queued', async () => {
    const ingest = stack.containers.get('ingest') as LambdaContainer;
    for (const title of ['first note', 'second note']) {
      const response = httpAnswer(await ingest.invoke(signedDelivery(stack, title)));
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
    const worker = stack.containers.get('worker') as LambdaContainer;
    const records = await receiveJobRecords(jobIds.length);
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
      expect(file.bucket).toBe(stack.environments.get('worker')?.DOCRELAY_BUCKET);
      // The upload asked S3 for a SHA-256 (not the SDK's default CRC32): S3's answer is the job's hash.
      const head = await stack.clients.s3.send(
        new HeadObjectCommand({ Bucket: file.bucket, Key: file.key, ChecksumMode: 'ENABLED' }),
      );
      expect(head.ChecksumSHA256).toBe(Buffer.from(file.sha256, 'hex').toString('base64'));
      const object = await stack.clients.s3.send(
        new GetObjectCommand({ Bucket: file.bucket, Key: file.key }),
      );
      const bytes = await object.Body?.transformToByteArray();
      expect(bytes?.length).toBe(file.storedSize);
      expect(sha256(bytes ?? new Uint8Array()).toString('hex')).toBe(file.sha256);
    }
  });

  it("jobs API: a stored job's presigned link, from a warm container, downloads the stored bytes", async () => {
    const jobsApi = stack.containers.get('jobs-api') as LambdaContainer;
    for (const jobId of jobIds) {
      const path = `/v1/jobs/${jobId}`;
      const response = httpAnswer(
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
      expect(url.origin).toBe(stack.moto.url);
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
      join(stack.work, 'credentials'),
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
      ...(stack.environments.get('jobs-api') as Record<string, string>),
      AWS_SHARED_CREDENTIALS_FILE: join(stack.work, 'credentials'),
      AWS_CONTAINER_CREDENTIALS_FULL_URI: `http://127.0.0.1:${port}/credentials`,
    };
    delete env.AWS_ACCESS_KEY_ID;
    delete env.AWS_SECRET_ACCESS_KEY;
    delete env.AWS_SESSION_TOKEN;
    const container = startContainer(env.LAMBDA_TASK_ROOT as string, env);
    try {
      const jobId = jobIds[0] as string;
      const path = `/v1/jobs/${jobId}`;
      const response = httpAnswer(
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
