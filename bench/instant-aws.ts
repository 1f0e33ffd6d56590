/**
 * AWS SDK clients whose calls are answered at once, in process: the SDK still builds, serialises, signs and
 * parses every request (that is the handler's own work), only the network round trip is gone. Answers are
 * the smallest valid ones for the operations the ingest makes (DynamoDB PutItem/BatchWriteItem/
 * UpdateItem/GetItem, SQS SendMessageBatch with the MD5s the SDK checks) and the worker's
 * (EventBridge PutEvents). With a `table`, DynamoDB PutItem (and the puts of BatchWriteItem) keeps the item under its `pk` and GetItem answers it, and an UpdateItem asking for
 * ALL_NEW is answered with the kept item as the update would leave it (no condition is checked, no update
 * kept): the worker benchmark reads the records an ingest wrote, round after round.
 */
import { createHash } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { HttpRequest, HttpResponse } from '@smithy/types';
import {
  documentClientOf,
  prepareClient,
  withCachedDocumentMiddleware,
} from '../functions/adapters/aws-clients';

const credentials = { accessKeyId: 'AKIDBENCH', secretAccessKey: 'bench-secret' } as const;
const region = 'us-east-1';

const jsonResponse = (body: unknown, contentType: string): { response: HttpResponse } => ({
  response: {
    statusCode: 200,
    headers: { 'content-type': contentType, 'x-amzn-requestid': 'bench' },
    body: Buffer.from(JSON.stringify(body)),
  },
});

const bodyText = (request: HttpRequest): string => {
  const body: unknown = request.body;
  if (typeof body === 'string') return body;
  // A view over the same bytes: Buffer.from(body) would copy through the SDK's string adapter (and warn).
  if (body instanceof Uint8Array)
    return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  return '';
};

interface BatchEntry {
  readonly Id?: unknown;
  readonly MessageBody?: unknown;
}

function answerSqs(request: HttpRequest): { response: HttpResponse } {
  const target = request.headers['x-amz-target'] ?? '';
  if (target.endsWith('.SendMessageBatch')) {
    const parsed: unknown = JSON.parse(bodyText(request));
    const entries: BatchEntry[] =
      typeof parsed === 'object' && parsed !== null && 'Entries' in parsed && Array.isArray(parsed.Entries)
        ? (parsed.Entries as BatchEntry[])
        : [];
    return jsonResponse(
      {
        Successful: entries.map((entry, i) => ({
          Id: String(entry.Id),
          MessageId: `m-${i}`,
          MD5OfMessageBody: createHash('md5')
            .update(String(entry.MessageBody ?? ''))
            .digest('hex'),
        })),
        Failed: [],
      },
      'application/x-amz-json-1.0',
    );
  }
  return jsonResponse({}, 'application/x-amz-json-1.0');
}

/** Items by their `pk`, as DynamoDB's wire format (`{ pk: { S: ... }, ... }`). */
export type InstantTable = Map<string, unknown>;

const pkOf = (value: unknown): string | undefined => {
  const pk = typeof value === 'object' && value !== null && 'pk' in value ? value.pk : undefined;
  return typeof pk === 'object' && pk !== null && 'S' in pk && typeof pk.S === 'string' ? pk.S : undefined;
};

function answerDynamo(request: HttpRequest, table: InstantTable | undefined): { response: HttpResponse } {
  if (table === undefined) return jsonResponse({}, 'application/x-amz-json-1.0');
  const target = request.headers['x-amz-target'] ?? '';
  const parsed: unknown = JSON.parse(bodyText(request) || '{}');
  if (target.endsWith('.PutItem') && typeof parsed === 'object' && parsed !== null && 'Item' in parsed) {
    const pk = pkOf(parsed.Item);
    if (pk !== undefined) table.set(pk, parsed.Item);
  }
  if (
    target.endsWith('.BatchWriteItem') &&
    typeof parsed === 'object' &&
    parsed !== null &&
    'RequestItems' in parsed
  ) {
    // The ingest's job records: every PutRequest kept (nothing left unprocessed).
    for (const requests of Object.values(parsed.RequestItems as Record<string, unknown[]>)) {
      for (const request of requests) {
        const item = (request as { PutRequest?: { Item?: unknown } }).PutRequest?.Item;
        const pk = pkOf(item);
        if (pk !== undefined) table.set(pk, item);
      }
    }
  }
  if (target.endsWith('.GetItem') && typeof parsed === 'object' && parsed !== null && 'Key' in parsed) {
    const item = table.get(pkOf(parsed.Key) ?? '');
    return jsonResponse(item === undefined ? {} : { Item: item }, 'application/x-amz-json-1.0');
  }
  if (target.endsWith('.UpdateItem') && typeof parsed === 'object' && parsed !== null && 'Key' in parsed) {
    // ALL_NEW (the worker's claim, and the close that reads the delivery): the kept item with the update
    // applied, answered but not kept, so every benchmark round finds the records the ingest wrote.
    const input = parsed as UpdateInput;
    const item = table.get(pkOf(input.Key) ?? '');
    if (input.ReturnValues === 'ALL_NEW' && item !== undefined) {
      return jsonResponse({ Attributes: applyUpdate(item as WireItem, input) }, 'application/x-amz-json-1.0');
    }
  }
  return jsonResponse({}, 'application/x-amz-json-1.0');
}

type WireItem = Record<string, { N?: string } & Record<string, unknown>>;

interface UpdateInput {
  readonly Key: unknown;
  readonly ReturnValues?: string;
  readonly UpdateExpression?: string;
  readonly ExpressionAttributeNames?: Record<string, string>;
  readonly ExpressionAttributeValues?: WireItem;
}

/** The update expressions the adapters write: `SET a = :v, b = b + :n` and `REMOVE c, d`, on a copy. */
function applyUpdate(item: WireItem, input: UpdateInput): WireItem {
  const next = structuredClone(item);
  const names = input.ExpressionAttributeNames ?? {};
  const values = input.ExpressionAttributeValues ?? {};
  const name = (token: string): string => names[token] ?? token;
  const match = /^SET (.+?)(?: REMOVE (.+))?$/.exec(input.UpdateExpression ?? '');
  if (match === null) throw new Error(`instant AWS: unexpected update ${String(input.UpdateExpression)}`);
  for (const assignment of (match[1] as string).split(', ')) {
    const [target, value] = assignment.split(' = ') as [string, string];
    const sum = /^(\S+) \+ (:\S+)$/.exec(value);
    next[name(target)] =
      sum === null
        ? (values[value] as WireItem[string])
        : { N: String(Number(next[name(sum[1] as string)]?.N) + Number(values[sum[2] as string]?.N)) };
  }
  for (const removed of match[2]?.split(', ') ?? []) delete next[name(removed)];
  return next;
}

function answerEventBridge(request: HttpRequest): { response: HttpResponse } {
  const parsed: unknown = JSON.parse(bodyText(request) || '{}');
  const entries =
    typeof parsed === 'object' && parsed !== null && 'Entries' in parsed && Array.isArray(parsed.Entries)
      ? parsed.Entries
      : [];
  return jsonResponse(
    { FailedEntryCount: 0, Entries: entries.map((_entry: unknown, i: number) => ({ EventId: `e-${i}` })) },
    'application/x-amz-json-1.1',
  );
}

/** Options of `instantAwsClients`. */
export interface InstantAwsOptions {
  /** Keep PutItem's items and answer GetItem from them. @default none (every answer is empty) */
  readonly table?: InstantTable;
}

/**
 * A DynamoDB document client (as the runtime builds it), an SQS and an EventBridge client, answered instantly.
 */
export function instantAwsClients(options: InstantAwsOptions = {}): {
  dynamodb: DynamoDBDocumentClient;
  sqs: SQSClient;
  eventBridge: EventBridgeClient;
  destroy(): void;
} {
  // Built as functions/adapters/aws-clients.ts builds the runtime's on AWS (prepareClient, documentClientOf,
  // withCachedDocumentMiddleware).
  const ddb = new DynamoDBClient({
    region,
    credentials,
    requestHandler: { handle: async (request: HttpRequest) => answerDynamo(request, options.table) },
  });
  // As on AWS: the document client's middleware resolved once per command type.
  const dynamodb = withCachedDocumentMiddleware(documentClientOf(ddb));
  const sqs = prepareClient(
    new SQSClient({
      region,
      credentials,
      // As on AWS (functions/adapters/aws-clients.ts): the stack is resolved once per command type.
      cacheMiddleware: true,
      requestHandler: { handle: async (request: HttpRequest) => answerSqs(request) },
    }),
  );
  const eventBridge = prepareClient(
    new EventBridgeClient({
      region,
      credentials,
      requestHandler: { handle: async (request: HttpRequest) => answerEventBridge(request) },
    }),
  );
  return {
    dynamodb,
    sqs,
    eventBridge,
    destroy: () => {
      ddb.destroy();
      sqs.destroy();
      eventBridge.destroy();
    },
  };
}
