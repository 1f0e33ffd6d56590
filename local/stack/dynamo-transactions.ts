/**
 * TransactWriteItems for the local DynamoDB, answered in front of dynalite (which has none) on the same port:
 * each write in order with dynalite's single-item operations, the earlier ones undone on the first failure, the
 * cancellation answered as DynamoDB does. Every other operation goes to dynalite untouched. What it does not
 * emulate: docs/decisions.md, "TransactWriteItems in front of dynalite".
 */
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type {
  AttributeValue,
  ConsumedCapacity,
  DeleteItemCommandInput,
  DeleteItemCommandOutput,
  DescribeTableCommandOutput,
  GetItemCommandOutput,
  PutItemCommandOutput,
  UpdateItemCommandInput,
  UpdateItemCommandOutput,
} from '@aws-sdk/client-dynamodb';
import type { AwsCredentialIdentity } from '@smithy/types';

const TARGET = 'DynamoDB_20120810.TransactWriteItems';
/** DynamoDB's limits: items per transaction, and how long a client request token is remembered. */
const MAX_ITEMS = 100;
const TOKEN_TTL_MS = 10 * 60_000;
/** Tokens remembered at most (the oldest are forgotten first). */
const MAX_TOKENS = 10_000;
/** The largest request body read (dynalite's own limit). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

type Item = Record<string, AttributeValue>;

/** One entry of TransactItems, as the wire carries it. */
interface TransactEntry {
  readonly Put?: Operation & { Item: Item };
  readonly Update?: Operation & { Key: Item; UpdateExpression: string };
  readonly Delete?: Operation & { Key: Item };
  readonly ConditionCheck?: Operation & { Key: Item; ConditionExpression: string };
}

interface Operation {
  readonly TableName: string;
  readonly ConditionExpression?: string;
  readonly ExpressionAttributeNames?: Record<string, string>;
  readonly ExpressionAttributeValues?: Item;
  readonly ReturnValuesOnConditionCheckFailure?: 'ALL_OLD' | 'NONE';
}

/** An error answered to the client: DynamoDB's `__type` and message, with extra fields. */
class WireError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

const validation = (message: string): WireError =>
  new WireError('com.amazon.coral.validate#ValidationException', message);

/** Options of the transaction front. */
export interface TransactionFrontOptions {
  readonly region: string;
  readonly credentials: AwsCredentialIdentity;
}

/**
 * Makes `server` (a dynalite server) answer TransactWriteItems; everything else still goes to dynalite. Call
 * once, before or after it listens; it holds nothing to release (its calls go to dynalite in process).
 */
export function addTransactWriteItems(server: Server, options: TransactionFrontOptions): void {
  const [dynalite] = server.listeners('request') as Array<
    (req: IncomingMessage, res: ServerResponse) => void
  >;
  if (dynalite === undefined) throw new Error('the DynamoDB emulator has no request handler');
  const front = new TransactionFront(
    inProcessCalls((request, response) => dynalite.call(server, request, response), options),
  );
  server.removeAllListeners('request');
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (request.headers['x-amz-target'] !== TARGET) return dynalite.call(server, request, response);
    void front.answer(request, response);
  });
}

/** One single-item operation of DynamoDB's JSON protocol: its wire input, resolving to its wire output. */
type Call = <T>(operation: string, input: object) => Promise<T>;

/** A failed operation as dynalite answered it: `name` is its error type without the namespace of `type`. */
class OperationError extends Error {
  override readonly name: string;
  constructor(
    readonly type: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = type.slice(type.lastIndexOf('#') + 1);
  }
}

/**
 * The front's own operations, sent to dynalite's request handler in this process as the JSON the SDK would
 * send, with no socket and no signing (dynalite checks that a SigV4 header is there, not its signature).
 */
function inProcessCalls(
  dynalite: (request: IncomingMessage, response: ServerResponse) => void,
  options: TransactionFrontOptions,
): Call {
  const credential = `${options.credentials.accessKeyId}/20000101/${options.region}/dynamodb/aws4_request`;
  return <T>(operation: string, input: object): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const request = Object.assign(new EventEmitter(), {
        method: 'POST',
        url: '/',
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': `DynamoDB_20120810.${operation}`,
          'x-amz-date': '20000101T000000Z',
          authorization: `AWS4-HMAC-SHA256 Credential=${credential}, SignedHeaders=host, Signature=0`,
        },
      });
      let status = 200;
      const response = {
        set statusCode(value: number) {
          status = value;
        },
        get statusCode(): number {
          return status;
        },
        setHeader: () => undefined,
        end: (body?: string) => {
          try {
            const answer = JSON.parse(body ?? '{}') as {
              __type?: string;
              message?: string;
              Message?: string;
            };
            if (status === 200) return resolve(answer as T);
            const type = answer.__type ?? 'com.amazonaws.dynamodb.v20120810#InternalServerError';
            reject(new OperationError(type, answer.message ?? answer.Message ?? type, status));
          } catch (error) {
            reject(error);
          }
        },
      };
      dynalite(request as unknown as IncomingMessage, response as unknown as ServerResponse);
      request.emit('data', Buffer.from(JSON.stringify(input)));
      request.emit('end');
    });
}

/** The old image of one item written, to undo the write. */
interface Undo {
  readonly table: string;
  readonly key: Item;
  readonly old: Item | undefined;
}

/** Runs transactions one at a time over single-item operations. */
class TransactionFront {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly tokens = new Map<string, { digest: string; until: number }>();
  private readonly keyNames = new Map<string, string[]>();

  constructor(private readonly call: Call) {}

  async answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    try {
      const body = await readBody(request);
      const input = parse(body);
      const run = this.queue.then(() => this.transact(input, digest(body)));
      this.queue = run.catch(() => undefined);
      send(response, 200, await run);
    } catch (error) {
      const wire =
        error instanceof WireError
          ? error
          : new WireError('com.amazonaws.dynamodb.v20120810#InternalServerError', String(error), 500);
      send(response, wire.status, { __type: wire.type, message: wire.message, ...wire.extra });
    }
  }

  private async transact(input: TransactInput, bodyDigest: string): Promise<object> {
    const now = Date.now();
    // Tokens are held for one lifetime, so they expire in the order they were added: the scan stops at the
    // first live one instead of reading all (up to MAX_TOKENS) on every transaction.
    for (const [token, held] of this.tokens) {
      if (held.until > now) break;
      this.tokens.delete(token);
    }
    const token = input.ClientRequestToken;
    const held = token === undefined ? undefined : this.tokens.get(token);
    if (held !== undefined) {
      if (held.digest !== bodyDigest)
        throw new WireError(
          'com.amazonaws.dynamodb.v20120810#IdempotentParameterMismatchException',
          'The request uses the same client token as a previous, but non-identical request.',
        );
      return {};
    }
    const keys = await Promise.all(input.TransactItems.map((entry) => this.keyOf(entry)));
    const seen = new Set(keys.map(({ table, key }) => `${table}\n${JSON.stringify(key)}`));
    if (seen.size < keys.length)
      throw validation('Transaction request cannot include multiple operations on one item');

    const undo: Undo[] = [];
    const capacity = new Map<string, number>();
    const count = (consumed: ConsumedCapacity | undefined): void => {
      if (consumed?.TableName === undefined) return;
      // Transactional writes cost twice what the same writes alone do.
      capacity.set(
        consumed.TableName,
        (capacity.get(consumed.TableName) ?? 0) + 2 * (consumed.CapacityUnits ?? 0),
      );
    };
    for (const [i, entry] of input.TransactItems.entries()) {
      const { table, key } = keys[i] as { table: string; key: Item };
      try {
        const done = await this.apply(entry, key);
        count(done.consumed);
        if (entry.ConditionCheck === undefined) undo.push({ table, key, old: done.old });
      } catch (error) {
        await this.undo(undo);
        if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw asWire(error);
        const operation = operationOf(entry);
        const old =
          operation.ReturnValuesOnConditionCheckFailure === 'ALL_OLD'
            ? await this.get(table, key)
            : undefined;
        const reasons = input.TransactItems.map((_, j) =>
          j === i
            ? {
                Code: 'ConditionalCheckFailed',
                Message: 'The conditional request failed',
                ...(old ? { Item: old } : {}),
              }
            : { Code: 'None' },
        );
        throw new WireError(
          'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
          `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((r) => r.Code).join(', ')}]`,
          400,
          { CancellationReasons: reasons },
        );
      }
    }
    if (token !== undefined) {
      if (this.tokens.size >= MAX_TOKENS) this.tokens.delete(this.tokens.keys().next().value as string);
      this.tokens.set(token, { digest: bodyDigest, until: now + TOKEN_TTL_MS });
    }
    const wantsCapacity =
      input.ReturnConsumedCapacity === 'TOTAL' || input.ReturnConsumedCapacity === 'INDEXES';
    return wantsCapacity
      ? {
          ConsumedCapacity: [...capacity].map(([TableName, units]) => ({
            TableName,
            CapacityUnits: units,
            WriteCapacityUnits: units,
          })),
        }
      : {};
  }

  /** One write of the transaction alone, conditionally; resolves to the item's old image. */
  private async apply(
    entry: TransactEntry,
    key: Item,
  ): Promise<{ old: Item | undefined; consumed: ConsumedCapacity | undefined }> {
    const common = { ReturnValues: 'ALL_OLD', ReturnConsumedCapacity: 'TOTAL' } as const;
    const write = (['Put', 'Update', 'Delete'] as const).find((kind) => entry[kind] !== undefined);
    if (write !== undefined) {
      // The single-item operation of the same name takes the same fields, less the cancellation's own option.
      const { ReturnValuesOnConditionCheckFailure: _r, ...input } = entry[write] as Operation;
      const out = await this.call<PutItemCommandOutput | UpdateItemCommandOutput | DeleteItemCommandOutput>(
        `${write}Item`,
        { ...input, ...common },
      );
      return { old: out.Attributes, consumed: out.ConsumedCapacity };
    }
    // A condition check writes nothing: an update that changes nothing checks the condition, and the item it
    // created when there was none is deleted at once.
    const check = entry.ConditionCheck as NonNullable<TransactEntry['ConditionCheck']>;
    const out = await this.call<UpdateItemCommandOutput>('UpdateItem', {
      TableName: check.TableName,
      Key: key,
      ConditionExpression: check.ConditionExpression,
      UpdateExpression: 'REMOVE #docrelayConditionCheck',
      ExpressionAttributeNames: {
        ...check.ExpressionAttributeNames,
        '#docrelayConditionCheck': 'docrelay:check',
      },
      ...(check.ExpressionAttributeValues === undefined
        ? {}
        : { ExpressionAttributeValues: check.ExpressionAttributeValues }),
      ...common,
    } satisfies UpdateItemCommandInput);
    if (out.Attributes === undefined)
      await this.call('DeleteItem', {
        TableName: check.TableName,
        Key: key,
      } satisfies DeleteItemCommandInput);
    return { old: out.Attributes, consumed: undefined };
  }

  /** Puts back the old images of the writes made, last first. */
  private async undo(writes: readonly Undo[]): Promise<void> {
    for (const { table, key, old } of [...writes].reverse()) {
      if (old === undefined) await this.call('DeleteItem', { TableName: table, Key: key });
      else await this.call('PutItem', { TableName: table, Item: old });
    }
  }

  private async get(table: string, key: Item): Promise<Item | undefined> {
    const out = await this.call<GetItemCommandOutput>('GetItem', {
      TableName: table,
      Key: key,
      ConsistentRead: true,
    });
    return out.Item;
  }

  /** The table and key an entry writes (its key attributes, by the table's key schema). */
  private async keyOf(entry: TransactEntry): Promise<{ table: string; key: Item }> {
    const operation = operationOf(entry);
    const table = operation.TableName;
    if (typeof table !== 'string') throw validation('TableName is required');
    let names = this.keyNames.get(table);
    if (names === undefined) {
      const described = await this.call<DescribeTableCommandOutput>('DescribeTable', {
        TableName: table,
      }).catch((error: unknown) => {
        throw asWire(error);
      });
      names = (described.Table?.KeySchema ?? []).map((element) => String(element.AttributeName));
      this.keyNames.set(table, names);
    }
    const source = entry.Put?.Item ?? (operation as { Key?: Item }).Key;
    if (source === undefined) throw validation('every item of a transaction needs its key');
    const key: Item = {};
    for (const name of names) {
      const value = source[name];
      if (value === undefined) throw validation(`One of the required keys was not given a value: ${name}`);
      key[name] = value;
    }
    return { table, key };
  }
}

interface TransactInput {
  readonly TransactItems: readonly TransactEntry[];
  readonly ClientRequestToken?: string;
  readonly ReturnConsumedCapacity?: string;
}

function parse(body: Buffer): TransactInput {
  let input: unknown;
  try {
    input = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WireError(
      'com.amazon.coral.service#SerializationException',
      'Start of structure or map found where not expected',
    );
  }
  const items = (input as { TransactItems?: unknown } | null)?.TransactItems;
  if (!Array.isArray(items) || items.length === 0 || items.length > MAX_ITEMS)
    throw validation(`transactItems must have between 1 and ${MAX_ITEMS} items`);
  for (const entry of items as TransactEntry[]) operationOf(entry);
  return input as TransactInput;
}

/** The one operation of an entry; an entry with none or several is invalid. */
function operationOf(entry: TransactEntry): Operation {
  const operations = [entry.Put, entry.Update, entry.Delete, entry.ConditionCheck].filter(
    (operation) => operation !== undefined,
  );
  if (operations.length !== 1)
    throw validation('TransactItems can only contain one of Check, Put, Update or Delete');
  return operations[0] as Operation;
}

/** A single-item operation's failure, answered as dynalite answered it; anything else is a 500. */
function asWire(error: unknown): WireError {
  if (error instanceof WireError) return error;
  if (error instanceof OperationError) return new WireError(error.type, error.message, error.status);
  return new WireError('com.amazonaws.dynamodb.v20120810#InternalServerError', String(error), 500);
}

const digest = (body: Buffer): string => createHash('sha256').update(body).digest('hex');

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        request.destroy();
        reject(
          new WireError('com.amazon.coral.service#SerializationException', 'the request is too large', 413),
        );
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function send(response: ServerResponse, status: number, body: object): void {
  const text = Buffer.from(JSON.stringify(body));
  response.writeHead(status, {
    'content-type': 'application/x-amz-json-1.0',
    'content-length': text.length,
    'x-amzn-requestid': createHash('sha1').update(text).digest('hex').slice(0, 32),
  });
  response.end(text);
}
