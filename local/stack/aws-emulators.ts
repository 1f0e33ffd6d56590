/**
 * Starts the embedded AWS emulators of the local stack on loopback ports and creates docrelay's resources in
 * them: DynamoDB (dynalite, LevelDB under the data directory: jobs survive a restart), S3 (s3rver, files
 * under the data directory: stored documents survive a restart) and SQS (fauxqs, in memory: at start-up the
 * reconciler sends a message again for every open job, so nothing queued is lost across a restart).
 */
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  type AttributeValue,
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  PutItemCommand,
  ResourceNotFoundException,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import { JOB_TABLE } from '../../functions/config/table-contract';

import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../state-files';
import { reopenCutDeliveries } from './repair-cut-deliveries';

export { LOCAL_CREDENTIALS, LOCAL_REGION };

/** Options of the local AWS emulators. */
export interface AwsEmulatorOptions {
  /** Where DynamoDB and S3 keep their data. */
  readonly dataDir: string;
  /** SQS receives of a job message before it moves to the dead-letter queue. @default 5 */
  readonly maxReceiveCount?: number;
  /** Visibility timeout of the jobs queue, in seconds. @default 120 */
  readonly visibilityTimeoutSeconds?: number;
  /**
   * How long the DynamoDB emulator takes to make a new table ACTIVE (dynalite's `createTableMs`). @default 0
   * (still not at once: see waitForTable). Tests widen it.
   */
  readonly tableCreateMs?: number;
}

/** The running emulators and the resources in them. */
export interface AwsEmulators {
  readonly region: string;
  readonly endpoints: { readonly s3: string; readonly sqs: string; readonly dynamodb: string };
  readonly tableName: string;
  readonly bucket: string;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  stop(): Promise<void>;
}

const TABLE = 'docrelay-jobs';
const BUCKET = 'docrelay-documents';
const QUEUE = 'docrelay-jobs';
const DLQ = 'docrelay-jobs-dlq';

const listen = (server: Server): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });

const closeServer = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.closeAllConnections?.();
    server.close(() => resolve());
  });

/** Starts DynamoDB, S3 and SQS emulators on 127.0.0.1 and creates the table, bucket and queues. */
export async function startAwsEmulators(options: AwsEmulatorOptions): Promise<AwsEmulators> {
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    const dynamoDir = join(options.dataDir, 'dynamodb');
    const s3Dir = join(options.dataDir, 's3');
    await mkdir(dynamoDir, { recursive: true });
    await mkdir(s3Dir, { recursive: true });

    const dynamoServer = dynalite({
      path: dynamoDir,
      createTableMs: options.tableCreateMs ?? 0,
      deleteTableMs: 0,
      updateTableMs: 0,
    });
    const dynamoPort = await listen(dynamoServer);
    stops.push(() => closeServer(dynamoServer));

    const s3Server = new S3rver({ port: 0, address: '127.0.0.1', directory: s3Dir, silent: true });
    completePutsOnly(s3Server);
    const s3Address = (await s3Server.run()) as AddressInfo;
    stops.push(() => s3Server.close());

    const sqsEmulator = await startSqsEmulator();
    stops.push(() => sqsEmulator.stop());

    const endpoints = {
      dynamodb: `http://127.0.0.1:${dynamoPort}`,
      s3: `http://127.0.0.1:${s3Address.port}`,
      sqs: sqsEmulator.endpoint,
    };
    const clientBase = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };

    const ddb = new DynamoDBClient({ ...clientBase, endpoint: endpoints.dynamodb });
    await ensureTable(ddb);
    await repairOpenIndex(ddb);
    await reopenCutDeliveries(ddb, TABLE);
    ddb.destroy();

    const s3 = new S3Client({
      ...clientBase,
      endpoint: endpoints.s3,
      forcePathStyle: true,
      requestChecksumCalculation: 'WHEN_REQUIRED',
    });
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET })).catch((error: { name?: string }) => {
      if (error.name !== 'BucketAlreadyOwnedByYou' && error.name !== 'BucketAlreadyExists') throw error;
    });
    s3.destroy();

    const sqs = new SQSClient({ ...clientBase, endpoint: endpoints.sqs });
    const dlq = await sqs.send(
      new CreateQueueCommand({ QueueName: DLQ, Attributes: { MessageRetentionPeriod: '1209600' } }),
    );
    const dlqArn = (
      await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }))
    ).Attributes?.QueueArn;
    const queue = await sqs.send(
      new CreateQueueCommand({
        QueueName: QUEUE,
        Attributes: {
          VisibilityTimeout: String(options.visibilityTimeoutSeconds ?? 120),
          MessageRetentionPeriod: '1209600',
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: dlqArn,
            maxReceiveCount: options.maxReceiveCount ?? 5,
          }),
        },
      }),
    );
    sqs.destroy();

    return {
      region: LOCAL_REGION,
      endpoints,
      tableName: TABLE,
      bucket: BUCKET,
      queueUrl: queue.QueueUrl as string,
      dlqUrl: dlq.QueueUrl as string,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** A running SQS emulator (fauxqs, messages in memory). */
export interface SqsEmulator {
  /** Its endpoint on loopback. */
  readonly endpoint: string;
  stop(): Promise<void>;
}

/**
 * Starts fauxqs on a free port of 127.0.0.1. Its app is listened on here, not through its `startFauxqs`,
 * which binds every interface whatever host it is given: the queue would be open to the network.
 */
export async function startSqsEmulator(): Promise<SqsEmulator> {
  // fauxqs is an ES module; a dynamic import keeps this CommonJS module loadable.
  const { buildApp } = await import('fauxqs');
  const app = buildApp({ logger: false, host: '127.0.0.1', defaultRegion: LOCAL_REGION });
  const address: string = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    endpoint: `http://127.0.0.1:${new URL(address).port}`,
    stop: async () => {
      await app.close();
    },
  };
}

/**
 * Makes s3rver's putObject all-or-nothing, as S3's is: the body goes to a temporary file beside the object (a
 * name s3rver does not list) and replaces the object once the whole body arrived. s3rver's own wrote straight
 * into the object, so an aborted copy left a truncated object.
 */
function completePutsOnly(server: S3rver): void {
  const { store } = server;
  const original = store.putObject.bind(store);
  store.putObject = async (object) => {
    if (Buffer.isBuffer(object.content)) return original(object);
    const request = object.content;
    const objectPath = store.getResourcePath(object.bucket, object.key, 'object');
    const partial = `${objectPath}.${randomUUID()}.partial`;
    await mkdir(dirname(objectPath), { recursive: true });
    const md5 = createHash('md5');
    let size = 0;
    try {
      await pipeline(
        request,
        new Transform({
          transform(chunk: Buffer, _encoding, callback) {
            md5.update(chunk);
            size += chunk.length;
            callback(null, chunk);
          },
        }),
        createWriteStream(partial),
      );
      if ((request as { complete?: boolean }).complete === false) throw new Error('request body incomplete');
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
    await rename(partial, objectPath);
    const digest = md5.digest('hex');
    await store.putMetadata(object.bucket, object.key, object.metadata, digest);
    return { size, md5: digest };
  };
}

/** The table's definition, as lib/builders/table.ts makes it on AWS (the shared table contract). */
export const TABLE_DEFINITION = {
  TableName: TABLE,
  BillingMode: 'PAY_PER_REQUEST',
  AttributeDefinitions: [
    { AttributeName: JOB_TABLE.partitionKey, AttributeType: 'S' },
    { AttributeName: JOB_TABLE.openPartitionKey, AttributeType: 'S' },
    { AttributeName: JOB_TABLE.openSortKey, AttributeType: 'N' },
    { AttributeName: JOB_TABLE.listPartitionKey, AttributeType: 'S' },
    { AttributeName: JOB_TABLE.listSortKey, AttributeType: 'S' },
    { AttributeName: JOB_TABLE.deliveryIdKey, AttributeType: 'S' },
  ],
  KeySchema: [{ AttributeName: JOB_TABLE.partitionKey, KeyType: 'HASH' }],
  GlobalSecondaryIndexes: [
    {
      IndexName: JOB_TABLE.openJobsIndex,
      KeySchema: [
        { AttributeName: JOB_TABLE.openPartitionKey, KeyType: 'HASH' },
        { AttributeName: JOB_TABLE.openSortKey, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: JOB_TABLE.openJobsProjection },
    },
    {
      IndexName: JOB_TABLE.jobsByTimeIndex,
      KeySchema: [
        { AttributeName: JOB_TABLE.listPartitionKey, KeyType: 'HASH' },
        { AttributeName: JOB_TABLE.listSortKey, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...JOB_TABLE.jobsByTimeAttributes] },
    },
    {
      IndexName: JOB_TABLE.byDeliveryIndex,
      KeySchema: [{ AttributeName: JOB_TABLE.deliveryIdKey, KeyType: 'HASH' }],
      Projection: { ProjectionType: 'KEYS_ONLY' },
    },
  ],
} satisfies CreateTableCommandInput;

/** Pages of a start-up scan, at most (1 MB each: far beyond any local table). */
const MAX_SCAN_PAGES = 10_000;

/**
 * Writes every open item back unchanged, before anything else uses the table, so dynalite writes its index
 * entries again: a kill between its index and item writes can leave an open job out of the open-jobs index,
 * where the start-up reconciler would never find it (docs/decisions.md, "Re-indexing open items at start").
 */
async function repairOpenIndex(ddb: DynamoDBClient): Promise<void> {
  let startKey: Record<string, AttributeValue> | undefined;
  for (let page = 0; page < MAX_SCAN_PAGES; page += 1) {
    const result = await ddb.send(
      new ScanCommand({
        TableName: TABLE,
        FilterExpression: 'attribute_exists(#open)',
        ExpressionAttributeNames: { '#open': JOB_TABLE.openPartitionKey },
        ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
      }),
    );
    for (const item of result.Items ?? []) {
      await ddb.send(new PutItemCommand({ TableName: TABLE, Item: item }));
    }
    startKey = result.LastEvaluatedKey;
    if (startKey === undefined) return;
  }
}

/** Looks at a table being created or deleted this often, and at most this long. */
const TABLE_POLL_MS = 10;
const TABLE_WAIT_MS = 30_000;

/**
 * Waits until the table is ACTIVE with every index (after CreateTable) or gone (after DeleteTable): dynalite
 * makes a new table ACTIVE a moment after answering, and answers "not found" until then.
 */
async function waitForTable(ddb: DynamoDBClient, state: 'active' | 'gone'): Promise<void> {
  const deadline = Date.now() + TABLE_WAIT_MS;
  for (;;) {
    let status: string | undefined;
    try {
      const { Table } = await ddb.send(new DescribeTableCommand({ TableName: TABLE }));
      const indexes = (Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexStatus);
      status = indexes.every((index) => index === 'ACTIVE') ? Table?.TableStatus : 'CREATING';
    } catch (error) {
      if (!(error instanceof ResourceNotFoundException)) throw error;
    }
    if (state === 'active' ? status === 'ACTIVE' : status === undefined) return;
    if (Date.now() > deadline) {
      throw new Error(
        `the local table ${TABLE} is still ${status ?? 'missing'} after ${TABLE_WAIT_MS / 1000} s`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, TABLE_POLL_MS));
  }
}

/**
 * Creates the jobs table with its indexes, unless a previous run did. A table from an older version lacking
 * an index is rebuilt with its items (dynalite cannot add an index to a table; the local data is small), and
 * jobs get the listing keys the adapter now writes, so they show up in lists.
 */
async function ensureTable(ddb: DynamoDBClient): Promise<void> {
  let existing: string[] | undefined;
  try {
    const described = await ddb.send(new DescribeTableCommand({ TableName: TABLE }));
    existing = (described.Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName ?? '');
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  const wanted = TABLE_DEFINITION.GlobalSecondaryIndexes.map((index) => index.IndexName);
  if (existing !== undefined && wanted.every((name) => existing.includes(name))) return;
  const items: Array<Record<string, AttributeValue>> = [];
  if (existing !== undefined) {
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await ddb.send(
        new ScanCommand({
          TableName: TABLE,
          ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
        }),
      );
      items.push(...(page.Items ?? []));
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
    await ddb.send(new DeleteTableCommand({ TableName: TABLE }));
    await waitForTable(ddb, 'gone');
  }
  await ddb.send(new CreateTableCommand(TABLE_DEFINITION));
  await waitForTable(ddb, 'active');
  for (const item of items) {
    const receivedAt = item.receivedAt?.S;
    const jobId = item.jobId?.S;
    if (item.kind?.S === 'job' && receivedAt !== undefined && jobId !== undefined) {
      item[JOB_TABLE.listPartitionKey] = { S: `jobs#${receivedAt.slice(0, 10)}` };
      item[JOB_TABLE.listSortKey] = { S: `${receivedAt}#${jobId}` };
    }
    await ddb.send(new PutItemCommand({ TableName: TABLE, Item: item }));
  }
}
