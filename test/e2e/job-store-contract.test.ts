/**
 * The job store contract (test/helpers/job-store-contract.ts) on the DynamoDB adapter over real DynamoDB
 * APIs: dynalite, as the local stack runs it, and moto_server (Python moto), each with the local stack's
 * table definition (the same indexes and projections as the deployed table), a fresh table per test.
 */
import {
  DynamoDBClient as Client,
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { documentClientOf } from '../../functions/adapters/aws-clients';
import { DynamoJobRepository } from '../../functions/adapters/dynamodb/job-table';
import { TABLE_DEFINITION } from '../../local/stack/aws-emulators';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/state-files';
import {
  CONTRACT_RETENTION_DAYS,
  describeJobStoreContract,
  type MakeStore,
} from '../helpers/job-store-contract';
import { type MotoServer, startMotoServer } from '../helpers/moto-server';
import { type LocalDynamo, startDynalite } from './helpers/dynalite';

/** How long a new table may take to become ACTIVE with its indexes, and how often it is looked at. */
const TABLE_WAIT_MS = 10_000;
const TABLE_POLL_MS = 20;

let tables = 0;

/** A fresh table with the job table's indexes, ACTIVE. */
async function createJobTable(client: DynamoDBClient): Promise<string> {
  tables += 1;
  const name = `contract-${tables}`;
  await client.send(new CreateTableCommand({ ...TABLE_DEFINITION, TableName: name }));
  const deadline = Date.now() + TABLE_WAIT_MS;
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
    const indexes = (Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexStatus ?? 'ACTIVE');
    if (Table?.TableStatus === 'ACTIVE' && indexes.every((status) => status === 'ACTIVE')) return name;
    if (Date.now() > deadline) throw new Error(`table ${name} not ACTIVE within ${TABLE_WAIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, TABLE_POLL_MS));
  }
}

const storeOn =
  (client: () => DynamoDBClient): MakeStore =>
  async ({ now }) => {
    const name = await createJobTable(client());
    return {
      repository: new DynamoJobRepository(documentClientOf(client()), name, {
        now,
        retentionDays: CONTRACT_RETENTION_DAYS,
      }),
      advance: () => undefined,
    };
  };

describe('on dynalite', () => {
  let dynamo: LocalDynamo;
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(async () => {
    await dynamo?.close();
  });
  describeJobStoreContract(
    'DynamoDB adapter on dynalite',
    storeOn(() => dynamo.client),
  );
});

describe('on moto_server', () => {
  let moto: MotoServer | undefined;
  let client: DynamoDBClient;
  beforeAll(async () => {
    moto = await startMotoServer();
    client = new Client({
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
      endpoint: moto.url,
      maxAttempts: 1,
    });
  }, 60_000);
  afterAll(async () => {
    client?.destroy();
    await moto?.stop();
  });
  describeJobStoreContract(
    'DynamoDB adapter on moto_server',
    storeOn(() => client),
  );
});
