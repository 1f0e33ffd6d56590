/**
 * The client factories: every client is built without the SDK's logger middleware, with the SDK's user agent
 * computed once per operation and its configuration in fast mode, and still works.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ConditionalCheckFailedException, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, ListQueuesCommand } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import {
  createDynamoDbClient,
  createEventBridgeClient,
  createS3Client,
  createSecretsManagerClient,
  createSqsClient,
} from '../../../functions/adapters/aws-clients';

const settings = {
  region: 'us-east-1',
  credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'test-secret' },
} as const;

const middlewareNames = (client: { middlewareStack: { identify(): string[] } }): string[] =>
  client.middlewareStack.identify().map((entry) => entry.split(' ')[0] as string);

describe('the AWS client factories', () => {
  it.each([
    ['S3', () => createS3Client(settings)],
    ['SQS', () => createSqsClient(settings)],
    ['DynamoDB', () => createDynamoDbClient(settings)],
    ['EventBridge', () => createEventBridgeClient(settings)],
    ['Secrets Manager', () => createSecretsManagerClient(settings)],
  ])(
    'build the %s client without the SDK logger middleware (it copies every call for a no-op logger)',
    (_name, create) => {
      const client = create();
      const names = middlewareNames(client);
      // The stack is the SDK's, less the logger: signing and retries are still there.
      expect(names).not.toContain('loggerMiddleware');
      expect(names).toEqual(expect.arrayContaining(['retryMiddleware', 'httpSigningMiddleware']));
      client.destroy();
    },
  );

  it('caches the SQS client’s resolved middleware on AWS, not locally, and each send still carries its own input', async () => {
    const local = createSqsClient({ ...settings, endpoints: { sqs: 'http://127.0.0.1:9' } });
    expect(local.config.cacheMiddleware).not.toBe(true);
    local.destroy();
    const client = createSqsClient(settings);
    expect(client.config.cacheMiddleware).toBe(true);
    const urls: string[] = [];
    client.middlewareStack.add(
      () => async (args) => {
        urls.push((args.input as { QueueUrl?: string }).QueueUrl ?? '');
        throw Object.assign(new Error('answered here'), { name: 'AnsweredHere' });
      },
      { step: 'initialize' },
    );
    for (const url of ['https://sqs.example/a', 'https://sqs.example/b']) {
      await expect(client.send(new GetQueueAttributesCommand({ QueueUrl: url }))).rejects.toMatchObject({
        name: 'AnsweredHere',
      });
    }
    expect(urls).toEqual(['https://sqs.example/a', 'https://sqs.example/b']);
    client.destroy();
  });

  it('resolves the DynamoDB document client’s middleware once per command type on AWS, each call with its own input and answer', async () => {
    const putResolve = jest.spyOn(PutItemCommand.prototype, 'resolveMiddleware');
    const getResolve = jest.spyOn(GetItemCommand.prototype, 'resolveMiddleware');
    try {
      for (const [where, endpoints] of [
        ['AWS', undefined],
        ['local', { dynamodb: 'http://127.0.0.1:9' }],
      ] as const) {
        putResolve.mockClear();
        getResolve.mockClear();
        const client = createDynamoDbClient({
          ...settings,
          ...(endpoints === undefined ? {} : { endpoints }),
        });
        // DynamoDB's answers, behind the SDK's deserializer: each request is serialized and signed for real.
        const bodies: unknown[] = [];
        const answers: Array<{ status: number; body: unknown }> = [
          { status: 200, body: {} },
          { status: 200, body: {} },
          { status: 200, body: { Item: { pk: { S: 'a' }, n: { N: '1' } } } },
          { status: 200, body: { Item: { pk: { S: 'b' }, tags: { L: [{ S: 'x' }] } } } },
          { status: 400, body: { __type: 'ConditionalCheckFailedException', message: 'taken' } },
        ];
        client.middlewareStack.add(
          () => async (args) => {
            const request = args.request as { body: Uint8Array; headers: Record<string, string> };
            expect(request.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 /);
            // A view over the bytes (the SDK's body is a string adapter that warns when read as a string).
            const { buffer, byteOffset, byteLength } = request.body;
            bodies.push(JSON.parse(Buffer.from(buffer, byteOffset, byteLength).toString('utf8')));
            const answer = answers.shift() ?? { status: 500, body: {} };
            return {
              output: {} as never,
              response: {
                statusCode: answer.status,
                headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'unit' },
                body: Buffer.from(JSON.stringify(answer.body)),
              },
            };
          },
          { step: 'deserialize', priority: 'low' },
        );
        await client.send(new PutCommand({ TableName: 't', Item: { pk: 'a', n: 1, gone: undefined } }));
        await client.send(new PutCommand({ TableName: 't', Item: { pk: 'b', tags: ['x'] } }));
        const first = await client.send(new GetCommand({ TableName: 't', Key: { pk: 'a' } }));
        const second = await client.send(new GetCommand({ TableName: 't', Key: { pk: 'b' } }));
        expect(bodies).toEqual([
          { TableName: 't', Item: { pk: { S: 'a' }, n: { N: '1' } } },
          { TableName: 't', Item: { pk: { S: 'b' }, tags: { L: [{ S: 'x' }] } } },
          { TableName: 't', Key: { pk: { S: 'a' } } },
          { TableName: 't', Key: { pk: { S: 'b' } } },
        ]);
        expect([first.Item, second.Item]).toEqual([
          { pk: 'a', n: 1 },
          { pk: 'b', tags: ['x'] },
        ]);
        // Errors are the SDK's, as before.
        await expect(
          client.send(
            new PutCommand({
              TableName: 't',
              Item: { pk: 'c' },
              ConditionExpression: 'attribute_not_exists(pk)',
            }),
          ),
        ).rejects.toBeInstanceOf(ConditionalCheckFailedException);
        // A call with options goes through the SDK's send.
        answers.push({ status: 200, body: {} });
        await client.send(new PutCommand({ TableName: 't', Item: { pk: 'd' } }), {});
        const resolved = { put: putResolve.mock.calls.length, get: getResolve.mock.calls.length };
        expect({ where, ...resolved }).toEqual(
          where === 'AWS' ? { where, put: 2, get: 1 } : { where, put: 4, get: 2 },
        );
        client.destroy();
      }
    } finally {
      putResolve.mockRestore();
      getResolve.mockRestore();
    }
  });

  it('computes the user agent with the SDK once per operation and sends the same headers on later calls', async () => {
    // The local client: it resolves its middleware per send, so middleware added below applies to the next one.
    const client = createSqsClient({ ...settings, endpoints: { sqs: 'http://127.0.0.1:9' } });
    const config = client.config as unknown as { defaultUserAgentProvider: () => Promise<unknown> };
    const provider = config.defaultUserAgentProvider;
    let computed = 0;
    config.defaultUserAgentProvider = () => {
      computed += 1;
      return provider();
    };
    const sent: Array<{ ua?: string; amz?: string }> = [];
    client.middlewareStack.add(
      () => async (args) => {
        const headers = (args.request as { headers: Record<string, string> }).headers;
        sent.push({ ua: headers['user-agent'], amz: headers['x-amz-user-agent'] });
        throw Object.assign(new Error('answered here'), { name: 'AnsweredHere' });
      },
      { step: 'finalizeRequest', priority: 'low' },
    );
    const answered = { name: 'AnsweredHere' };
    for (let i = 0; i < 3; i++)
      await expect(client.send(new ListQueuesCommand({}))).rejects.toMatchObject(answered);
    expect(computed).toBe(1);
    await expect(
      client.send(new GetQueueAttributesCommand({ QueueUrl: 'https://sqs.example/a' })),
    ).rejects.toMatchObject(answered);
    expect(computed).toBe(2);
    // The SDK's own strings: its version, the service, the runtime.
    expect(sent[0]?.ua).toMatch(/^aws-sdk-js\/\S+ .*api\/sqs#\S+/);
    expect(sent[0]?.amz).toMatch(/^aws-sdk-js\/\S+/);
    expect(sent.slice(1, 3)).toEqual([sent[0], sent[0]]);
    expect(middlewareNames(client).filter((name) => name === 'getUserAgentMiddleware')).toHaveLength(1);

    // A request that already has a user agent goes through the SDK's middleware, which adds to it.
    client.middlewareStack.add(
      (next) => async (args) => {
        (args.request as { headers: Record<string, string> }).headers['x-amz-user-agent'] = 'caller/1';
        return next(args);
      },
      { step: 'build', priority: 'high' },
    );
    await expect(client.send(new ListQueuesCommand({}))).rejects.toMatchObject(answered);
    expect(computed).toBe(3);
    expect(sent[4]?.amz).toMatch(/aws-sdk-js\//);
    client.destroy();
  });

  it('gives every client a configuration with fast properties (a bare SDK client has a hash table), in this Node', () => {
    // V8 reports an object's mode only behind --allow-natives-syntax: asked in a child process.
    const root = join(__dirname, '..', '..', '..');
    const script = `
      const factories = require(${JSON.stringify(join(root, 'functions/adapters/aws-clients.ts'))});
      const { SQSClient } = require('@aws-sdk/client-sqs');
      const fast = new Function('o', 'return %HasFastProperties(o)');
      const settings = { region: 'us-east-1', credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'test' } };
      const local = { ...settings, endpoints: { s3: 'http://127.0.0.1:9', sqs: 'http://127.0.0.1:9', dynamodb: 'http://127.0.0.1:9' } };
      const modes = {};
      for (const name of ['createS3Client', 'createSqsClient', 'createDynamoDbClient', 'createEventBridgeClient', 'createSecretsManagerClient']) {
        modes[name] = [fast(factories[name](settings).config), fast(factories[name](local).config)];
      }
      modes.bare = fast(new SQSClient(settings).config);
      console.log(JSON.stringify(modes));
    `;
    const run = spawnSync(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '-e', script], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    });
    expect(run.stderr).not.toMatch(/Error/);
    expect(JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}')).toEqual({
      createS3Client: [true, true],
      createSqsClient: [true, true],
      createDynamoDbClient: [true, true],
      createEventBridgeClient: [true, true],
      createSecretsManagerClient: [true, true],
      // What the factories change: without them the SDK's configuration is a hash table.
      bare: false,
    });
  });

  it('still sends, signs and fails as before', async () => {
    const client = createSqsClient(settings);
    const seen: string[] = [];
    client.middlewareStack.add(
      () => async (args) => {
        const request = args.request as { headers: Record<string, string> };
        seen.push(request.headers.authorization?.split(' ')[0] ?? '');
        throw Object.assign(new Error('answered here'), { name: 'AnsweredHere' });
      },
      { step: 'finalizeRequest', priority: 'low' },
    );
    await expect(client.send(new ListQueuesCommand({}))).rejects.toMatchObject({ name: 'AnsweredHere' });
    expect(seen[0]).toBe('AWS4-HMAC-SHA256');
    client.destroy();
  });

  it('prints nothing to the console when a streamed upload fails (the copy reports it; the SDK would warn)', async () => {
    const client = createS3Client({ ...settings, endpoints: { s3: 'http://127.0.0.1:9' } });
    client.middlewareStack.add(
      () => async () => {
        throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
      },
      { step: 'finalizeRequest', priority: 'low' },
    );
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    const error = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const body = Readable.from([Buffer.from('half a file')]);
      await expect(
        client.send(new PutObjectCommand({ Bucket: 'b', Key: 'k', Body: body, ContentLength: 11 })),
      ).rejects.toMatchObject({ message: 'socket hang up' });
      expect(warn).not.toHaveBeenCalled();
      expect(error).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
      error.mockRestore();
      client.destroy();
    }
  });
});
