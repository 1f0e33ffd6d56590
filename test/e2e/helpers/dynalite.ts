/**
 * A dynalite on loopback, as the local stack runs it, and an SDK client for it (one
 * attempt, no retries): for tests of what the DynamoDB API itself answers.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../../local/state-files';

/** A running dynalite and its client. */
export interface LocalDynamo {
  readonly client: DynamoDBClient;
  /** Creates a table keyed by the string `pk` alone, on demand. */
  createTable(name: string): Promise<void>;
  close(): Promise<void>;
}

export async function startDynalite(): Promise<LocalDynamo> {
  const server = dynalite({ createTableMs: 0 }) as Server;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const client = new DynamoDBClient({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    maxAttempts: 1,
  });
  return {
    client,
    createTable: async (name) => {
      await client.send(
        new CreateTableCommand({
          TableName: name,
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
    },
    close: async () => {
      client.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
