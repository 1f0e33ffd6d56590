/**
 * The bounds on each attempt of an AWS call (AwsClientSettings.timeouts): against a loopback server that takes
 * the request and never answers, every client gives the attempt up with a `TimeoutError` and the SDK tries
 * again, up to its attempts, instead of waiting for the service default (minutes). A request-response call is
 * bounded by the wait for its answer and its silences; an S3 transfer only by its silences (no bound on its
 * length). On AWS (no endpoints) the clients get AWS_CALL_TIMEOUTS; pointed at the local emulators, none.
 * Every case here ends the same way however slowly this process runs: the server never answers, or stops.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { NodeHttpHandlerOptions } from '@smithy/types';
import {
  AWS_CALL_TIMEOUTS,
  type CallTimeouts,
  createDynamoDbClient,
  createEventBridgeClient,
  createS3Client,
  createSecretsManagerClient,
  createSqsClient,
} from '../../../functions/adapters/aws-clients';

const base = {
  region: 'us-east-1',
  credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'test-secret' },
} as const;

/**
 * Short bounds, so that a stalled attempt ends in a fraction of a second here. Connecting on loopback is
 * immediate: its bound is long, so that only the answer's bounds end an attempt however slowly this runs.
 */
const SHORT: CallTimeouts = { connectMs: 30_000, attemptMs: 150, transferIdleMs: 150 };

/** Counts the client's attempts: a middleware after the retry middleware runs once per attempt. */
function countAttempts(client: {
  middlewareStack: { add(middleware: unknown, options: { step: 'deserialize' }): void };
}): () => number {
  let attempts = 0;
  client.middlewareStack.add(
    (next: (args: unknown) => Promise<unknown>) => (args: unknown) => {
      attempts += 1;
      return next(args);
    },
    { step: 'deserialize' },
  );
  return () => attempts;
}

/** A loopback server that reads every request and answers as `answer` says (by default: never). */
interface Stalling {
  readonly url: string;
  /** Requests whose head was read. */
  readonly requests: () => number;
  /** Resolves once `count` request heads have been read; rejects after `withinMs`. */
  readonly reached: (count: number, withinMs?: number) => Promise<void>;
  readonly close: () => Promise<void>;
}

async function startServer(answer?: (socket: Socket) => void): Promise<Stalling> {
  let requests = 0;
  const waiters: Array<{ count: number; done: () => void }> = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let head = '';
    socket.on('data', (chunk: Buffer) => {
      if (head.includes('\r\n\r\n')) return;
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      requests += 1;
      for (const waiter of waiters.filter((w) => requests >= w.count)) waiter.done();
      answer?.(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests: () => requests,
    reached: (count, withinMs = 10_000) =>
      new Promise<void>((resolve, reject) => {
        if (requests >= count) {
          resolve();
          return;
        }
        const timer = setTimeout(
          () => reject(new Error(`${requests} of ${count} requests in ${withinMs} ms`)),
          withinMs,
        );
        waiters.push({
          count,
          done: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      }),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The options the client's HTTP handler was built with (the SDK keeps them behind a promise). */
async function handlerOptions(client: {
  config: { requestHandler: unknown };
}): Promise<NodeHttpHandlerOptions> {
  const handler = client.config.requestHandler as { configProvider?: Promise<NodeHttpHandlerOptions> };
  if (handler.configProvider === undefined) throw new Error('not a NodeHttpHandler');
  return handler.configProvider;
}

describe('bounds on each attempt of an AWS call', () => {
  let server: Stalling;
  afterEach(async () => {
    // The SDK's own variables for a service's endpoint (Secrets Manager and EventBridge have no emulator).
    delete process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER;
    delete process.env.AWS_ENDPOINT_URL_EVENTBRIDGE;
    await server?.close();
  });

  it.each([
    [
      'DynamoDB',
      async (url: string, timeouts: CallTimeouts) => {
        const client = createDynamoDbClient({ ...base, endpoints: { dynamodb: url }, timeouts });
        return {
          attempts: await client.config.maxAttempts(),
          made: countAttempts(client),
          call: () => client.send(new GetCommand({ TableName: 't', Key: { pk: 'a' } })),
          destroy: () => client.destroy(),
        };
      },
    ],
    [
      'SQS',
      async (url: string, timeouts: CallTimeouts) => {
        const client = createSqsClient({ ...base, endpoints: { sqs: url }, timeouts });
        return {
          attempts: await client.config.maxAttempts(),
          made: countAttempts(client),
          call: () =>
            client.send(
              new SendMessageBatchCommand({
                QueueUrl: `${url}/000000000000/jobs`,
                Entries: [{ Id: '1', MessageBody: 'job' }],
              }),
            ),
          destroy: () => client.destroy(),
        };
      },
    ],
    [
      'Secrets Manager',
      async (url: string, timeouts: CallTimeouts) => {
        process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = url;
        const client = createSecretsManagerClient({ ...base, timeouts });
        return {
          attempts: await client.config.maxAttempts(),
          made: countAttempts(client),
          call: () => client.send(new GetSecretValueCommand({ SecretId: 'docrelay/github-webhook' })),
          destroy: () => client.destroy(),
        };
      },
    ],
  ])(
    'gives up a %s attempt that gets no answer, and tries again up to the SDK’s attempts',
    async (_name, create) => {
      server = await startServer();
      const client = await create(server.url, SHORT);
      try {
        await expect(client.call()).rejects.toMatchObject({ name: 'TimeoutError' });
        expect(client.attempts).toBeGreaterThan(1);
        expect(client.made()).toBe(client.attempts);
        // The requests did reach the server (each attempt's head is read there, maybe after the client gave up).
        await server.reached(1);
      } finally {
        client.destroy();
      }
    },
  );

  it('gives up a request-response answer that stops halfway (its head came in time)', async () => {
    server = await startServer((socket) => {
      socket.write(
        'HTTP/1.1 200 OK\r\ncontent-type: application/x-amz-json-1.0\r\ncontent-length: 64\r\n\r\n{"Item":',
      );
    });
    const client = createDynamoDbClient({
      ...base,
      endpoints: { dynamodb: server.url },
      timeouts: SHORT,
    });
    try {
      await expect(client.send(new GetCommand({ TableName: 't', Key: { pk: 'a' } }))).rejects.toMatchObject({
        name: 'TimeoutError',
      });
    } finally {
      client.destroy();
    }
  });

  it('gives up an S3 upload whose socket goes silent, and tries again', async () => {
    server = await startServer();
    const client = createS3Client({ ...base, endpoints: { s3: server.url }, timeouts: SHORT });
    const made = countAttempts(client);
    try {
      await expect(
        client.send(new PutObjectCommand({ Bucket: 'b', Key: 'k', Body: Buffer.from('a file') })),
      ).rejects.toMatchObject({ name: 'TimeoutError' });
      expect(made()).toBe(await client.config.maxAttempts());
      await server.reached(1);
    } finally {
      client.destroy();
    }
  });

  it('bounds every client on AWS (no endpoints) and none pointed at the local emulators', async () => {
    const aws = [
      createDynamoDbClient(base),
      createSqsClient(base),
      createSecretsManagerClient(base),
      createEventBridgeClient(base),
    ];
    for (const client of aws) {
      expect(await handlerOptions(client)).toMatchObject({
        connectionTimeout: AWS_CALL_TIMEOUTS.connectMs,
        requestTimeout: AWS_CALL_TIMEOUTS.attemptMs,
        throwOnRequestTimeout: true,
        socketTimeout: AWS_CALL_TIMEOUTS.attemptMs,
      });
      client.destroy();
    }
    const s3 = createS3Client(base);
    const s3Options = await handlerOptions(s3);
    expect(s3Options).toMatchObject({
      connectionTimeout: AWS_CALL_TIMEOUTS.connectMs,
      socketTimeout: AWS_CALL_TIMEOUTS.transferIdleMs,
    });
    // A streamed upload of a large file may take any time: only its silences are bounded.
    expect(s3Options.requestTimeout).toBeUndefined();
    s3.destroy();

    const endpoints = { s3: 'http://127.0.0.1:9', sqs: 'http://127.0.0.1:9', dynamodb: 'http://127.0.0.1:9' };
    for (const client of [
      createDynamoDbClient({ ...base, endpoints }),
      createSqsClient({ ...base, endpoints }),
      createS3Client({ ...base, endpoints }),
    ]) {
      const options = await handlerOptions(client);
      expect(options.requestTimeout).toBeUndefined();
      expect(options.connectionTimeout).toBeUndefined();
      expect(options.socketTimeout).toBeUndefined();
      client.destroy();
    }
  });

  it('sends an EventBridge event through the same bounds', async () => {
    server = await startServer();
    process.env.AWS_ENDPOINT_URL_EVENTBRIDGE = server.url;
    const client = createEventBridgeClient({ ...base, timeouts: SHORT });
    const made = countAttempts(client);
    try {
      await expect(
        client.send(
          new PutEventsCommand({
            Entries: [{ Source: 'docrelay', DetailType: 'Document Stored', Detail: '{}' }],
          }),
        ),
      ).rejects.toMatchObject({ name: 'TimeoutError' });
      expect(made()).toBe(await client.config.maxAttempts());
      await server.reached(1);
    } finally {
      client.destroy();
    }
  });
});
