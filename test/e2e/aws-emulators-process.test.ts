/**
 * The local AWS emulators in their own process (local/stack/aws-emulators-process.ts): they answer on
 * loopback, keep their data across a stop and a start on the same directory, end when stopped, and end by
 * themselves, with the workers' process beside them, when the process that started them is killed; when they
 * die, `docrelay dev` stops with exit code 1.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescribeTableCommand, DynamoDBClient, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { ClassicLevel } from 'classic-level';
import { JOB_TABLE } from '../../functions/config/table-contract';
import { LOCAL_CREDENTIALS, LOCAL_REGION, startAwsEmulators } from '../../local/stack/aws-emulators';
import { startAwsEmulatorsProcess } from '../../local/stack/aws-emulators-process';
import { processAlive } from '../../local/state-files';
import { startDevProcess } from './helpers/dev-process';
import { childrenOf, commandLineOf, listeningAddresses } from './helpers/processes';
import { waitUntil } from './helpers/wait';

jest.setTimeout(60_000);

let dataDir: string;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'docrelay-e2e-aws-process-'));
});

afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const client = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };

it('answers on loopback, keeps its data across a restart, and ends when stopped', async () => {
  const first = await startAwsEmulatorsProcess({ dataDir });
  expect(first.pid).not.toBe(process.pid);
  expect(Object.values(first.endpoints)).toEqual(
    expect.arrayContaining([expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/)]),
  );
  const s3 = new S3Client({ ...client, endpoint: first.endpoints.s3, forcePathStyle: true });
  await s3.send(new PutObjectCommand({ Bucket: first.bucket, Key: 'kept.txt', Body: 'still here' }));
  s3.destroy();
  await first.stop();
  expect(processAlive(first.pid)).toBe(false);

  const second = await startAwsEmulatorsProcess({ dataDir });
  try {
    const again = new S3Client({ ...client, endpoint: second.endpoints.s3, forcePathStyle: true });
    const object = await again.send(new GetObjectCommand({ Bucket: second.bucket, Key: 'kept.txt' }));
    expect(await object.Body?.transformToString()).toBe('still here');
    again.destroy();
    const dynamodb = new DynamoDBClient({ ...client, endpoint: second.endpoints.dynamodb });
    const table = await dynamodb.send(new DescribeTableCommand({ TableName: second.tableName }));
    expect(table.Table?.TableStatus).toBe('ACTIVE');
    dynamodb.destroy();
    const sqs = new SQSClient({ ...client, endpoint: second.endpoints.sqs });
    const queue = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: second.queueUrl, AttributeNames: ['RedrivePolicy'] }),
    );
    expect(queue.Attributes?.RedrivePolicy).toContain('docrelay-jobs-dlq');
    sqs.destroy();
  } finally {
    await second.stop();
  }
  // A second stop is a no-op.
  await second.stop();
});

const linuxOnly = process.platform === 'linux' ? it : it.skip;

linuxOnly('listens on loopback only: the API, the service emulator and the three AWS emulators', async () => {
  const dev = await startDevProcess(dataDir);
  try {
    const pid = dev.child.pid as number;
    const addresses = [pid, ...childrenOf(pid)].flatMap(listeningAddresses);
    const { aws, docgen } = dev.endpoints;
    const ports = [dev.url, aws?.dynamodb, aws?.s3, aws?.sqs, docgen?.baseUrl].map(
      (url) => new URL(String(url)).port,
    );
    expect(new Set(ports).size).toBe(5);
    expect(addresses.map((address) => address.slice(address.lastIndexOf(':') + 1))).toEqual(
      expect.arrayContaining(ports),
    );
    for (const address of addresses) expect(address).toMatch(/^(127\.0\.0\.1|\[::1\]):\d+$/);
  } finally {
    await dev.stop('SIGINT');
  }
});

linuxOnly(
  'ends by itself, as the workers do, when `docrelay dev` is killed, so a new stack can use the data directory',
  async () => {
    const dev = await startDevProcess(dataDir);
    const children = childrenOf(dev.child.pid as number);
    const modules = children.map((pid) => /[\w-]+-child\.ts/.exec(commandLineOf(pid))?.[0]).sort();
    expect(modules).toEqual(['aws-emulators-child.ts', 'workers-child.ts']);

    await dev.stop('SIGKILL');

    await waitUntil('the emulators to end after their parent', async () =>
      children.every((pid) => !processAlive(pid)) ? true : undefined,
    );
    const next = await startDevProcess(dataDir);
    expect((await fetch(`${next.url}/healthz`)).status).toBe(200);
    expect(await next.stop('SIGINT')).toEqual({ code: 0, signal: null });
    expect(children.concat(childrenOf(next.child.pid as number)).every((pid) => !processAlive(pid))).toBe(
      true,
    );
  },
);

linuxOnly(
  'stops `docrelay dev` with exit code 1 when the AWS emulators die, and a new one resumes the data',
  async () => {
    const dev = await startDevProcess(dataDir);
    const children = childrenOf(dev.child.pid as number);
    const emulators = children.find((pid) => commandLineOf(pid).includes('aws-emulators-child.ts'));

    process.kill(emulators as number, 'SIGKILL');

    // Nobody stops it: it ends by itself, its workers' process with it.
    expect(await dev.exited).toEqual({ code: 1, signal: null });
    expect(dev.output()).toMatch(
      /docrelay dev: the AWS emulators' process ended \(signal SIGKILL\); stopping\. Start it again: every open job resumes from /,
    );
    expect(dev.output()).toContain('stopped');
    await waitUntil('the workers to end', async () =>
      children.every((pid) => !processAlive(pid)) ? true : undefined,
    );
    const next = await startDevProcess(dataDir);
    expect((await fetch(`${next.url}/healthz`)).status).toBe(200);
    expect(await next.stop('SIGINT')).toEqual({ code: 0, signal: null });
  },
);

it('starts on a new data directory however long the table takes to become ACTIVE', async () => {
  // dynalite makes a new table ACTIVE after createTableMs; until then every request on it answers "Requested
  // resource not found". At 0 ms the start-up lost that race now and then; at 300 ms it always would.
  const aws = await startAwsEmulators({ dataDir, tableCreateMs: 300 });
  try {
    const dynamodb = new DynamoDBClient({ ...client, endpoint: aws.endpoints.dynamodb });
    const table = await dynamodb.send(new DescribeTableCommand({ TableName: aws.tableName }));
    expect(table.Table?.TableStatus).toBe('ACTIVE');
    dynamodb.destroy();
  } finally {
    await aws.stop();
  }
});

it('finds an open job again at start-up when a kill left it out of the open-jobs index', async () => {
  // dynalite writes an item's index entries and the item in separate LevelDB writes: a SIGKILL between them
  // can drop the item from the index. Simulated here by removing the index's entries while the emulators are
  // stopped; the next start must list the job for the reconciler again.
  const item = {
    pk: { S: 'job#left-out' },
    kind: { S: 'job' },
    status: { S: 'created' },
    [JOB_TABLE.openPartitionKey]: { S: 'open#0' },
    [JOB_TABLE.openSortKey]: { N: '1' },
  };
  const openJobs = async (endpoint: string, tableName: string): Promise<string[]> => {
    const dynamodb = new DynamoDBClient({ ...client, endpoint });
    try {
      const result = await dynamodb.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: JOB_TABLE.openJobsIndex,
          KeyConditionExpression: '#open = :open AND #until < :before',
          ExpressionAttributeNames: { '#open': JOB_TABLE.openPartitionKey, '#until': JOB_TABLE.openSortKey },
          ExpressionAttributeValues: { ':open': { S: 'open#0' }, ':before': { N: '2' } },
        }),
      );
      return (result.Items ?? []).map((found) => found.pk?.S ?? '');
    } finally {
      dynamodb.destroy();
    }
  };

  const first = await startAwsEmulatorsProcess({ dataDir });
  const dynamodb = new DynamoDBClient({ ...client, endpoint: first.endpoints.dynamodb });
  await dynamodb.send(new PutItemCommand({ TableName: first.tableName, Item: item }));
  dynamodb.destroy();
  expect(await openJobs(first.endpoints.dynamodb, first.tableName)).toEqual(['job#left-out']);
  await first.stop();

  const level = new ClassicLevel(join(dataDir, 'dynamodb'));
  const prefix = `index-global~${first.tableName}~${JOB_TABLE.openJobsIndex}~`;
  const removed: string[] = [];
  for await (const key of level.keys({ gte: prefix, lt: `${prefix}\xff` })) removed.push(key);
  await level.batch(removed.map((key) => ({ type: 'del' as const, key })));
  await level.close();
  expect(removed).toHaveLength(1);

  const second = await startAwsEmulatorsProcess({ dataDir });
  try {
    expect(await openJobs(second.endpoints.dynamodb, second.tableName)).toEqual(['job#left-out']);
  } finally {
    await second.stop();
  }
});
