/**
 * One factory for every AWS SDK client docrelay uses. On AWS it is called with no endpoint; the local stack
 * passes the loopback endpoint of each embedded emulator. Nothing else differs between the two.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { getUserAgentMiddlewareOptions, userAgentMiddleware } from '@aws-sdk/core/client';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { BuildHandler, BuildMiddleware, MiddlewareStack, NodeHttpHandlerOptions } from '@smithy/types';

/** Where the clients connect. Omit everything on AWS; the local stack sets endpoints and static credentials. */
export interface AwsClientSettings {
  readonly region?: string;
  readonly endpoints?: { readonly s3?: string; readonly sqs?: string; readonly dynamodb?: string };
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /**
   * Bounds on each attempt of a call (`CallTimeouts`). @default AWS_CALL_TIMEOUTS on AWS (no endpoints); none
   * with endpoints (the local emulators answer on loopback, and a loaded test machine must not turn a slow
   * answer into a retry)
   */
  readonly timeouts?: CallTimeouts;
}

/**
 * Bounds on one attempt of an AWS call; the SDK's standard retry takes an attempt's `TimeoutError` as transient.
 * Without them a silent connection waits out the SDK's service default (minutes), far past a Lambda's timeout;
 * with them the stalled attempt is dropped and retried on a new connection.
 */
export interface CallTimeouts {
  /** Connecting to the service (TCP and TLS). */
  readonly connectMs: number;
  /**
   * A request-response call (DynamoDB, SQS, Secrets Manager, EventBridge): how long it waits for its answer to
   * begin, and then the longest silence within the answer. Must exceed the longest long poll docrelay makes
   * (ReceiveMessage waits at most 1 s).
   */
  readonly attemptMs: number;
  /** S3: the longest silence on a transfer's socket (a streamed upload of a large file has no bound on its length). */
  readonly transferIdleMs: number;
}

/**
 * The bounds on AWS: 5 s per attempt is reached only by a stalled connection and leaves the ingest room for a
 * second attempt. The S3 transfer bound is a backstop behind the download's own idle timeout, long enough for S3
 * to assemble a large multipart upload (docs/decisions.md, "AWS clients").
 */
export const AWS_CALL_TIMEOUTS: CallTimeouts = {
  connectMs: 3_000,
  attemptMs: 5_000,
  transferIdleMs: 120_000,
};

/** The AWS clients of one process, created once per container. */
export interface AwsClients {
  readonly s3: S3Client;
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBDocumentClient;
  readonly eventBridge: EventBridgeClient;
  readonly secretsManager: SecretsManagerClient;
}

type SdkLogger = Record<'debug' | 'info' | 'warn' | 'error', (...content: unknown[]) => void>;

type ClientBase = {
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  logger: SdkLogger;
  requestHandler?: NodeHttpHandlerOptions;
};

/** The bounds the clients of these settings get (`AwsClientSettings.timeouts`). */
const timeoutsOf = (settings: AwsClientSettings): CallTimeouts | undefined =>
  settings.timeouts ?? (settings.endpoints === undefined ? AWS_CALL_TIMEOUTS : undefined);

const silent = (): void => undefined;

/**
 * The SDK's logger: silent, like its default `NoOpLogger`, but not that class, with which the retry middleware
 * still prints a context-free line to the console on every failed streamed upload; the worker logs its own.
 * Nothing else calls it: the logger middleware is removed (`withoutSdkLogger`).
 */
const SILENT_SDK_LOGGER: SdkLogger = { debug: silent, info: silent, warn: silent, error: silent };

/**
 * What every client is given. The HTTP handler's options bound each attempt: a request-response call by the
 * wait for its answer's head (`requestTimeout`, which only warns unless `throwOnRequestTimeout`) and by its
 * silences after that (`socketTimeout`, an idle timeout on the socket); an S3 transfer by its silences alone.
 */
const clientBase = (settings: AwsClientSettings, calls: 'request-response' | 'transfer'): ClientBase => {
  const timeouts = timeoutsOf(settings);
  return {
    ...(settings.region === undefined ? {} : { region: settings.region }),
    ...(settings.credentials === undefined ? {} : { credentials: settings.credentials }),
    logger: SILENT_SDK_LOGGER,
    ...(timeouts === undefined
      ? {}
      : {
          requestHandler:
            calls === 'transfer'
              ? { connectionTimeout: timeouts.connectMs, socketTimeout: timeouts.transferIdleMs }
              : {
                  connectionTimeout: timeouts.connectMs,
                  requestTimeout: timeouts.attemptMs,
                  throwOnRequestTimeout: true,
                  socketTimeout: timeouts.attemptMs,
                },
        }),
  };
};

/**
 * The client without the SDK's logger middleware, which builds a redacted copy of every input and output for a
 * no-op logger (docrelay gives the SDK none), a visible share of the ingest's CPU (bench/analysis.md).
 */
export function withoutSdkLogger<T extends { middlewareStack: { remove(name: string): boolean } }>(
  client: T,
): T {
  client.middlewareStack.remove('loggerMiddleware');
  return client;
}

/**
 * Reads in withFastConfig, with a margin over what Node needs (the unit test checks the result).
 */
const FAST_CONFIG_READS = 200;

/**
 * The client with its resolved configuration in V8's fast-properties mode: the SDK builds it property by property
 * (dictionary mode) and copies it whole several times per call. Reading an object through a prototype chain makes
 * V8 give the prototype fast properties; nothing else changes. Figures: bench/analysis.md, docs/decisions.md.
 */
export function withFastConfig<T extends { config: object }>(client: T): T {
  const reader = Object.create(client.config) as Record<string, unknown>;
  // Enough reads for V8 to give this function its inline caches (it does so only after some bytecode has run,
  // even on the first call); the first read through a cache makes the prototype fast. Microseconds, once.
  for (let i = 0; i < FAST_CONFIG_READS; i++) void reader.region;
  return client;
}

/** The user-agent headers the SDK computed for one operation of a client. */
interface UserAgentHeaders {
  readonly userAgent: string | undefined;
  readonly amzUserAgent: string | undefined;
}

type Headers = Record<string, string>;

const headersOf = (request: unknown): Headers | undefined => {
  const headers = (request as { headers?: unknown } | undefined)?.headers;
  return typeof headers === 'object' && headers !== null ? (headers as Headers) : undefined;
};

/**
 * The client with the SDK's user-agent middleware run once per operation and its two headers reused on later
 * calls, since building them is a visible share of the ingest's CPU (bench/analysis.md). A feature only a later
 * call would add is not reported; a request that already carries either header goes through the SDK's middleware.
 */
export function withUserAgentOnce<
  T extends { config: object; middlewareStack: Pick<MiddlewareStack<object, object>, 'add'> },
>(client: T): T {
  const sdk = userAgentMiddleware(client.config as Parameters<typeof userAgentMiddleware>[0]);
  const byOperation = new Map<string, UserAgentHeaders>();
  const first = new WeakSet<object>();
  const once: BuildMiddleware<object, object> = (next, context) => {
    const operation = String(context.commandName);
    // The SDK's middleware, its result noted for the operation when the request had neither header before it.
    // Built only when a call needs it: once the operation's headers are known, calls skip it.
    const computed: BuildHandler<object, object> = (args) =>
      sdk(async (inner) => {
        const headers = headersOf(inner.request);
        if (headers !== undefined && first.has(inner.request as object)) {
          byOperation.set(operation, {
            userAgent: headers['user-agent'],
            amzUserAgent: headers['x-amz-user-agent'],
          });
        }
        return next(inner);
      }, context)(args);
    return async (args) => {
      const headers = headersOf(args.request);
      if (headers === undefined || 'user-agent' in headers || 'x-amz-user-agent' in headers)
        return computed(args);
      const known = byOperation.get(operation);
      if (known === undefined) {
        first.add(args.request as object);
        return computed(args);
      }
      if (known.userAgent !== undefined) headers['user-agent'] = known.userAgent;
      if (known.amzUserAgent !== undefined) headers['x-amz-user-agent'] = known.amzUserAgent;
      return next(args);
    };
  };
  // Same name, step and priority as the SDK's (which it overrides): middleware placed relative to it stays put.
  client.middlewareStack.add(once, getUserAgentMiddlewareOptions);
  return client;
}

/**
 * A client as docrelay uses it: no SDK logger middleware, the user agent computed once per operation, the
 * configuration in fast mode. (The benchmarks build their in-process clients with it too.)
 */
export function prepareClient<
  T extends {
    config: object;
    middlewareStack: Pick<MiddlewareStack<object, object>, 'add'> & { remove(name: string): boolean };
  },
>(client: T): T {
  return withFastConfig(withUserAgentOnce(withoutSdkLogger(client)));
}

/**
 * The document client (undefined attributes removed) over a base client, both prepared. The document client
 * shares the base client's configuration object and adds its own option to it, so the configuration is made
 * fast again after that.
 */
export function documentClientOf(base: DynamoDBClient): DynamoDBDocumentClient {
  // The document client sends through the base client's middleware stack.
  return withFastConfig(
    DynamoDBDocumentClient.from(prepareClient(base), { marshallOptions: { removeUndefinedValues: true } }),
  );
}

/** The parts of a lib-dynamodb command that its own `resolveMiddleware` uses (not in its typings). */
interface DocumentCommandParts {
  readonly clientCommand: {
    resolveMiddleware(
      stack: unknown,
      config: unknown,
      options: undefined,
    ): (command: unknown) => Promise<{ output: unknown }>;
  };
  readonly middlewareStack: unknown;
  addMarshallingMiddleware(config: unknown): void;
}

const isDocumentCommand = (command: unknown): command is DocumentCommandParts =>
  typeof command === 'object' &&
  command !== null &&
  'clientCommand' in command &&
  typeof (command.clientCommand as { resolveMiddleware?: unknown } | undefined)?.resolveMiddleware ===
    'function' &&
  'addMarshallingMiddleware' in command &&
  typeof command.addMarshallingMiddleware === 'function';

/**
 * The document client with its middleware resolved once per command type, as the SDK's `cacheMiddleware` does for
 * base clients (lib-dynamodb refuses it: aws-sdk-js-v3#7801); resolving sorts and copies the stack on every call.
 * Later commands of a type reuse the first one's handler with their own base command; calls with options or a
 * callback go through `send`. Middleware added after a type's first call is not seen: only the AWS factory uses this.
 */
export function withCachedDocumentMiddleware(client: DynamoDBDocumentClient): DynamoDBDocumentClient {
  const handlers = new Map<unknown, (command: unknown) => Promise<{ output: unknown }>>();
  const send = client.send.bind(client) as (...args: unknown[]) => Promise<unknown>;
  const cached = (...args: unknown[]): Promise<unknown> => {
    const [command] = args;
    if (args.length !== 1 || !isDocumentCommand(command)) return send(...args);
    const type = command.constructor;
    let handler = handlers.get(type);
    if (handler === undefined) {
      command.addMarshallingMiddleware(client.config);
      const stack = client.middlewareStack.concat(
        command.middlewareStack as Parameters<typeof client.middlewareStack.concat>[0],
      );
      handler = command.clientCommand.resolveMiddleware(stack, client.config, undefined);
      handlers.set(type, handler);
    }
    return handler(command.clientCommand).then((result) => result.output);
  };
  client.send = cached as typeof client.send;
  return client;
}

// One factory per client, so that a function bundles and loads only the SDK clients it uses (esbuild drops
// the unused factories and their SDK imports: the ingest needs neither S3 nor EventBridge).

/** The S3 client. */
export function createS3Client(settings: AwsClientSettings = {}): S3Client {
  const client = new S3Client({
    ...clientBase(settings, 'transfer'),
    ...(settings.endpoints?.s3 === undefined
      ? {}
      : { endpoint: settings.endpoints.s3, forcePathStyle: true }),
    // Local S3 emulators predate the SDK's default CRC32 trailers; S3 itself takes both.
    ...(settings.endpoints !== undefined
      ? { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' }
      : {}),
  });
  return prepareClient(client);
}

/**
 * The SQS client. On AWS (no endpoint) it resolves its middleware stack once per command type instead of on
 * every send (`cacheMiddleware`, ~5% of the ingest's CPU per webhook); nothing adds middleware to it after its
 * first send there. Locally it resolves per send: tests add middleware to the running stack's client.
 */
export function createSqsClient(settings: AwsClientSettings = {}): SQSClient {
  return prepareClient(
    new SQSClient({
      ...clientBase(settings, 'request-response'),
      ...(settings.endpoints?.sqs === undefined
        ? { cacheMiddleware: true }
        : { endpoint: settings.endpoints.sqs }),
    }),
  );
}

/**
 * The DynamoDB document client (undefined attributes removed). On AWS (no endpoint) it resolves its middleware
 * once per command type (`withCachedDocumentMiddleware`), as the SQS client does; locally per send.
 */
export function createDynamoDbClient(settings: AwsClientSettings = {}): DynamoDBDocumentClient {
  const endpoint = settings.endpoints?.dynamodb;
  const client = documentClientOf(
    new DynamoDBClient({
      ...clientBase(settings, 'request-response'),
      ...(endpoint === undefined ? {} : { endpoint }),
    }),
  );
  return endpoint === undefined ? withCachedDocumentMiddleware(client) : client;
}

/** The EventBridge client. */
export function createEventBridgeClient(settings: AwsClientSettings = {}): EventBridgeClient {
  return prepareClient(new EventBridgeClient(clientBase(settings, 'request-response')));
}

/** The Secrets Manager client. */
export function createSecretsManagerClient(settings: AwsClientSettings = {}): SecretsManagerClient {
  return prepareClient(new SecretsManagerClient(clientBase(settings, 'request-response')));
}

/** Creates the AWS clients, pointed at the given endpoints when there are any. */
export function createAwsClients(settings: AwsClientSettings = {}): AwsClients {
  return {
    s3: createS3Client(settings),
    sqs: createSqsClient(settings),
    dynamodb: createDynamoDbClient(settings),
    eventBridge: createEventBridgeClient(settings),
    secretsManager: createSecretsManagerClient(settings),
  };
}
