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
  /** Settles once a request's head has been read there (maybe after the client gave up on it). */
  readonly received: Promise<void>;
  readonly close: () => Promise<void>;
}

async function startServer(answer?: (socket: Socket) => void): Promise<Stalling> {
  let heard: () => void = () => undefined;
  const received = new Promise<void>((resolve) => {
    heard = resolve;
  });
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
      heard();
      answer?.(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    received,
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

  /** A client pointed at the server, the call it makes, and the client itself (its attempts, its stop). */
  type Probe = (
    url: string,
    timeouts: CallTimeouts,
  ) => {
    client: Parameters<typeof countAttempts>[0] & {
      config: { maxAttempts(): Promise<number> };
      destroy(): void;
    };
    call: () => Promise<unknown>;
  };

  it.each<[string, Probe]>([
    [
      'DynamoDB',
      (url, timeouts) => {
        const client = createDynamoDbClient({ ...base, endpoints: { dynamodb: url }, timeouts });
        return { client, call: () => client.send(new GetCommand({ TableName: 't', Key: { pk: 'a' } })) };
      },
    ],
    [
      'SQS',
      (url, timeouts) => {
        const client = createSqsClient({ ...base, endpoints: { sqs: url }, timeouts });
        const send = new SendMessageBatchCommand({
          QueueUrl: `${url}/000000000000/jobs`,
          Entries: [{ Id: '1', MessageBody: 'job' }],
        });
        return { client, call: () => client.send(send) };
      },
    ],
    [
      'Secrets Manager',
      (url, timeouts) => {
        process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = url;
        const client = createSecretsManagerClient({ ...base, timeouts });
        return {
          client,
          call: () => client.send(new GetSecretValueCommand({ SecretId: 'docrelay/github-webhook' })),
        };
      },
    ],
    [
      'EventBridge',
      (url, timeouts) => {
        process.env.AWS_ENDPOINT_URL_EVENTBRIDGE = url;
        const client = createEventBridgeClient({ ...base, timeouts });
        const entry = { Source: 'docrelay', DetailType: 'Document Stored', Detail: '{}' };
        return { client, call: () => client.send(new PutEventsCommand({ Entries: [entry] })) };
      },
    ],
    [
      'S3 (an upload whose socket goes silent)',
      (url, timeouts) => {
        const client = createS3Client({ ...base, endpoints: { s3: url }, timeouts });
        const put = new PutObjectCommand({ Bucket: 'b', Key: 'k', Body: Buffer.from('a file') });
        return { client, call: () => client.send(put) };
      },
    ],
  ])(
    'gives up a %s attempt that gets no answer, and tries again up to the SDK’s attempts',
    async (_name, probe) => {
      server = await startServer();
      const { client, call } = probe(server.url, SHORT);
      const made = countAttempts(client);
      try {
        await expect(call()).rejects.toMatchObject({ name: 'TimeoutError' });
        const attempts = await client.config.maxAttempts();
        expect(attempts).toBeGreaterThan(1);
        expect(made()).toBe(attempts);
        await server.received;
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
});
