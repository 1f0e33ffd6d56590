/**
 * A hand fake of DynamoDBDocumentClient for the job table's unit tests: `send` interprets the Put, Get,
 * Update, Query, Scan, Batch and TransactWrite (puts only, all or nothing) commands the adapter issues on a Map of items, with the conditions it writes (an
 * unknown condition fails the test, so a change to the adapter's expressions is noticed). The open-jobs index
 * projects keys only, as the real table's does. Faults are injected per command.
 */
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import {
  claimCondition,
  claimKeepingLease,
  contentFreeOrOwn,
  deliveryClosable,
  deliveryNotEnqueued,
  itemDoesNotExist,
  itemExists,
  leaseHeldBy,
  versionUnchanged,
} from '../../../../functions/adapters/dynamodb/conditions';
import { JOB_TABLE } from '../../../../functions/config/table-contract';

type Item = Record<string, unknown>;
type Values = Record<string, unknown>;
type CommandName = 'Put' | 'Get' | 'Update' | 'Query' | 'Scan' | 'BatchWrite' | 'BatchGet' | 'TransactWrite';

/** The exception DynamoDB answers a failed condition with. */
export const conditionFailed = (
  old?: ConditionalCheckFailedException['Item'],
): ConditionalCheckFailedException =>
  new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: {},
    ...(old === undefined ? {} : { Item: old }),
  });

/** Undefined attributes are dropped, as `removeUndefinedValues` does in the adapter's client. */
const defined = (item: Item): Item =>
  Object.fromEntries(Object.entries(item).filter(([, value]) => value !== undefined));

/** A table in a Map, behind a `send` that speaks the adapter's commands. */
export class FakeJobTable {
  readonly items = new Map<string, Item>();
  /** Every command sent, by name, with its input. */
  readonly sent: Array<{ name: CommandName; input: Record<string, unknown> }> = [];
  /** Largest page a Query or Scan answers (DynamoDB's 1 MB page, scaled down). */
  pageSize = 1000;
  /** Runs after a Query page is computed and before it is answered (to close items "meanwhile"). */
  afterQuery: (() => void) | undefined;
  /** How many of the next batch requests leave their last item unprocessed (DynamoDB's throttling answer). */
  unprocessedBatches = 0;
  private readonly faults: Array<{ name: CommandName; error: unknown; after: number }> = [];

  /** The fake as the client type the adapter takes (it only ever calls `send`). */
  get client(): DynamoDBDocumentClient {
    return { send: (command: unknown) => this.send(command) } as unknown as DynamoDBDocumentClient;
  }

  /** Makes the next command of that kind throw `error`, or the one after `after` more of that kind succeed. */
  failNext(name: CommandName, error: unknown, after = 0): void {
    this.faults.push({ name, error, after });
  }

  /** Commands of one kind sent so far. */
  inputs(name: CommandName): Array<Record<string, unknown>> {
    return this.sent.filter((s) => s.name === name).map((s) => s.input);
  }

  private async send(command: unknown): Promise<unknown> {
    const name = commandName(command);
    const input = (command as { input: Record<string, unknown> }).input;
    this.sent.push({ name, input: structuredClone(input) });
    const fault = this.faults.find((f) => f.name === name);
    if (fault !== undefined && fault.after > 0) fault.after -= 1;
    else if (fault !== undefined) throw this.faults.splice(this.faults.indexOf(fault), 1)[0]?.error;
    switch (name) {
      case 'Put':
        return this.put(input);
      case 'Get':
        return { Item: structuredClone(this.items.get(String((input.Key as Item).pk))) };
      case 'Update':
        return this.update(input);
      case 'Query':
        return this.query(input);
      case 'Scan':
        return this.scan(input);
      case 'BatchWrite':
        return this.batchWrite(input);
      case 'BatchGet':
        return this.batchGet(input);
      case 'TransactWrite':
        return this.transactWrite(input);
    }
  }

  /**
   * Puts all or nothing: every condition is checked first; any that fails cancels the whole transaction with a
   * reason per item (the old item, in DynamoDB's wire format as the document client leaves it, when asked).
   */
  private transactWrite(input: Record<string, unknown>): object {
    const puts = (input.TransactItems as Array<{ Put?: Item }>).map((entry) => {
      if (entry.Put === undefined) throw new Error('fake table: only puts in a transaction');
      return entry.Put;
    });
    const reasons = puts.map((put) => {
      const item = defined(put.Item as Item);
      const existing = this.items.get(String(item.pk));
      if (this.putHolds(put, existing)) return { Code: 'None' };
      return {
        Code: 'ConditionalCheckFailed',
        Message: 'The conditional request failed',
        ...(put.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && existing !== undefined
          ? { Item: Object.fromEntries(Object.entries(existing).map(([k, v]) => [k, { S: String(v) }])) }
          : {}),
      };
    });
    if (reasons.some((reason) => reason.Code !== 'None')) {
      throw new TransactionCanceledException({
        message: 'Transaction cancelled',
        $metadata: {},
        CancellationReasons: reasons as never,
      });
    }
    for (const put of puts) {
      const item = defined(put.Item as Item);
      this.items.set(String(item.pk), structuredClone(item));
    }
    return {};
  }

  /** Whether a put's condition holds over the item it would replace. */
  private putHolds(input: Item, existing: Item | undefined): boolean {
    const values = (input.ExpressionAttributeValues ?? {}) as Values;
    switch (input.ConditionExpression) {
      case undefined:
        return true;
      case itemDoesNotExist:
        return existing === undefined;
      case contentFreeOrOwn:
        return (
          existing === undefined ||
          existing.holder === values[':deliveryId'] ||
          existing.deliveryId === values[':deliveryId']
        );
      default:
        throw new Error(`fake table: unexpected put condition ${String(input.ConditionExpression)}`);
    }
  }

  /** Puts without conditions, as BatchWriteItem does; the last request is left over while `unprocessedBatches`. */
  private batchWrite(input: Record<string, unknown>): object {
    const [[table, requests]] = Object.entries(input.RequestItems as Record<string, Item[]>) as [
      [string, Item[]],
    ];
    const left = this.unprocessedBatches > 0 ? requests.slice(-1) : [];
    if (left.length > 0) this.unprocessedBatches -= 1;
    for (const request of requests.slice(0, requests.length - left.length)) {
      const item = defined((request.PutRequest as { Item: Item }).Item);
      this.items.set(String(item.pk), structuredClone(item));
    }
    return left.length === 0 ? {} : { UnprocessedItems: { [table]: left } };
  }

  /** Reads keys, projected to the names asked for; the last key is left over while `unprocessedBatches`. */
  private batchGet(input: Record<string, unknown>): object {
    const [[table, request]] = Object.entries(input.RequestItems as Record<string, Item>) as [[string, Item]];
    const keys = request.Keys as Item[];
    const left = this.unprocessedBatches > 0 ? keys.slice(-1) : [];
    if (left.length > 0) this.unprocessedBatches -= 1;
    const names = (request.ExpressionAttributeNames ?? {}) as Record<string, string>;
    const projection = String(request.ProjectionExpression)
      .split(', ')
      .map((name) => names[name] ?? name);
    const found = keys.slice(0, keys.length - left.length).flatMap((key) => {
      const item = this.items.get(String(key.pk));
      return item === undefined ? [] : [Object.fromEntries(projection.map((name) => [name, item[name]]))];
    });
    return {
      Responses: { [table]: found },
      ...(left.length === 0 ? {} : { UnprocessedKeys: { [table]: { ...request, Keys: left } } }),
    };
  }

  /** A put; a failed condition comes with the old item (wire format, as the document client leaves it) if asked. */
  private put(input: Record<string, unknown>): object {
    const item = defined(input.Item as Item);
    const pk = String(item.pk);
    const existing = this.items.get(pk);
    if (!this.putHolds(input, existing)) {
      const error = conditionFailed();
      if (input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && existing !== undefined)
        error.Item = Object.fromEntries(Object.entries(existing).map(([k, v]) => [k, { S: String(v) }]));
      throw error;
    }
    this.items.set(pk, structuredClone(item));
    return {};
  }

  private update(input: Record<string, unknown>): object {
    const pk = String((input.Key as Item).pk);
    const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
    const values = (input.ExpressionAttributeValues ?? {}) as Values;
    const item = this.items.get(pk);
    const holds = ((): boolean => {
      switch (input.ConditionExpression) {
        case itemExists:
          return item !== undefined;
        case versionUnchanged:
          return item !== undefined && item[names['#version'] ?? ''] === values[':expected'];
        case deliveryNotEnqueued:
          return item !== undefined && item.enqueuedAt === undefined;
        case deliveryClosable:
          return item !== undefined && item.openPk !== undefined && item.sendFailedAt === undefined;
        case leaseHeldBy:
          return item !== undefined && item.leaseOwner === values[':owner'] && item.openPk !== undefined;
        case claimCondition:
          return claimable(item, values);
        case claimKeepingLease:
          return (
            claimable(item, values) &&
            (item?.leaseUntil as number) >= (values[':keepFrom'] as number) &&
            (item?.leaseUntil as number) <= (values[':keepTo'] as number)
          );
        default:
          throw new Error(`fake table: unexpected update condition ${String(input.ConditionExpression)}`);
      }
    })();
    if (!holds || item === undefined) {
      throw conditionFailed(
        input.ReturnValuesOnConditionCheckFailure === 'ALL_OLD' && item !== undefined
          ? wire(item)
          : undefined,
      );
    }
    const resolve = (token: string): string => names[token] ?? token;
    const expression = String(input.UpdateExpression);
    const match = /^SET (.+?)(?: REMOVE (.+))?$/.exec(expression);
    if (match === null) throw new Error(`fake table: unexpected update ${expression}`);
    for (const assignment of (match[1] as string).split(', ')) {
      const [name, value] = assignment.split(' = ') as [string, string];
      const sum = /^(\S+) \+ (:\S+)$/.exec(value);
      item[resolve(name)] =
        sum === null
          ? structuredClone(values[value])
          : (item[resolve(sum[1] as string)] as number) + (values[sum[2] as string] as number);
    }
    for (const name of match[2]?.split(', ') ?? []) delete item[resolve(name)];
    return input.ReturnValues === 'ALL_NEW' ? { Attributes: structuredClone(item) } : {};
  }

  private query(input: Record<string, unknown>): object {
    if (input.IndexName === JOB_TABLE.jobsByTimeIndex) return this.queryByTime(input);
    if (input.IndexName === JOB_TABLE.byDeliveryIndex) return this.queryByDelivery(input);
    const values = input.ExpressionAttributeValues as Values;
    if (input.KeyConditionExpression !== 'openPk = :open AND leaseUntil < :before') {
      throw new Error(`fake table: unexpected query ${String(input.KeyConditionExpression)}`);
    }
    const matching = [...this.items.values()]
      .filter(
        (item) => item.openPk === values[':open'] && Number(item.leaseUntil) < Number(values[':before']),
      )
      .sort(
        (a, b) => Number(a.leaseUntil) - Number(b.leaseUntil) || String(a.pk).localeCompare(String(b.pk)),
      );
    const page = this.page(matching, input, ['pk', 'openPk', 'leaseUntil']);
    this.afterQuery?.();
    return {
      ...page,
      Items: page.Items.map((item) => ({ pk: item.pk, openPk: item.openPk, leaseUntil: item.leaseUntil })),
    };
  }

  /** The jobs-by-time index: a partition newest first within a sort-key range, filtered after the page. */
  private queryByTime(input: Record<string, unknown>): object {
    const values = input.ExpressionAttributeValues as Values;
    const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
    const range = ((): ((sk: string) => boolean) => {
      const since = values[':since'] as string;
      const below = values[':below'] as string;
      switch (input.KeyConditionExpression) {
        case 'listPk = :p':
          return () => true;
        case 'listPk = :p AND listSk >= :since':
          return (sk) => sk >= since;
        case 'listPk = :p AND listSk < :below':
          return (sk) => sk < below;
        case 'listPk = :p AND listSk BETWEEN :since AND :below':
          return (sk) => sk >= since && sk <= below;
        default:
          throw new Error(`fake table: unexpected query ${String(input.KeyConditionExpression)}`);
      }
    })();
    if (input.ScanIndexForward !== false) throw new Error('fake table: lists are read newest first');
    const matching = [...this.items.values()]
      .filter((item) => item.listPk === values[':p'] && typeof item.listSk === 'string' && range(item.listSk))
      .sort((a, b) => (String(a.listSk) < String(b.listSk) ? 1 : -1));
    const page = this.page(matching, input, ['pk', 'listPk', 'listSk']);
    const filters = input.FilterExpression === undefined ? [] : String(input.FilterExpression).split(' AND ');
    const kept = page.Items.filter((item) =>
      filters.every((filter) => {
        const match = /^(#\w+) = (:\w+)$/.exec(filter);
        if (match === null) throw new Error(`fake table: unexpected filter ${filter}`);
        return item[names[match[1] as string] ?? ''] === values[match[2] as string];
      }),
    );
    const projected = ['pk', 'listPk', 'listSk', ...JOB_TABLE.jobsByTimeAttributes];
    return {
      ...page,
      Items: kept.map((item) => Object.fromEntries(projected.map((name) => [name, item[name]]))),
    };
  }

  /** The by-delivery index (keys only). */
  private queryByDelivery(input: Record<string, unknown>): object {
    const values = input.ExpressionAttributeValues as Values;
    if (input.KeyConditionExpression !== '#deliveryId = :id') {
      throw new Error(`fake table: unexpected query ${String(input.KeyConditionExpression)}`);
    }
    const matching = [...this.items.values()]
      .filter((item) => item.deliveryId === values[':id'])
      .sort((a, b) => String(a.pk).localeCompare(String(b.pk)));
    const page = this.page(matching, input, ['pk', 'deliveryId']);
    return { ...page, Items: page.Items.map((item) => ({ pk: item.pk, deliveryId: item.deliveryId })) };
  }

  private scan(input: Record<string, unknown>): object {
    if (input.FilterExpression !== '#kind = :job AND #status = :failed') {
      throw new Error(`fake table: unexpected scan ${String(input.FilterExpression)}`);
    }
    // A scan pages over the whole table and filters each page afterwards, as DynamoDB does.
    const all = [...this.items.values()].sort((a, b) => String(a.pk).localeCompare(String(b.pk)));
    const page = this.page(all, input);
    return {
      ...page,
      Items: page.Items.filter((item) => item.kind === 'job' && item.status === 'failed').map((item) =>
        structuredClone(item),
      ),
    };
  }

  /** One page from the start key on; the last key holds the `keys` of the last item read, as DynamoDB's. */
  private page(
    items: Item[],
    input: Record<string, unknown>,
    keys: readonly string[] = ['pk'],
  ): { Items: Item[]; LastEvaluatedKey?: Item } {
    const start = input.ExclusiveStartKey as Item | undefined;
    const from = start === undefined ? 0 : items.findIndex((item) => item.pk === start.pk) + 1;
    const size = Math.min(this.pageSize, typeof input.Limit === 'number' ? input.Limit : this.pageSize);
    const slice = items.slice(from, from + size);
    const last = slice.at(-1);
    return {
      Items: slice,
      ...(from + size < items.length && last !== undefined
        ? { LastEvaluatedKey: Object.fromEntries(keys.map((key) => [key, last[key]])) }
        : {}),
    };
  }
}

function commandName(command: unknown): CommandName {
  if (command instanceof PutCommand) return 'Put';
  if (command instanceof GetCommand) return 'Get';
  if (command instanceof UpdateCommand) return 'Update';
  if (command instanceof QueryCommand) return 'Query';
  if (command instanceof ScanCommand) return 'Scan';
  if (command instanceof BatchWriteCommand) return 'BatchWrite';
  if (command instanceof BatchGetCommand) return 'BatchGet';
  if (command instanceof TransactWriteCommand) return 'TransactWrite';
  throw new Error('fake table: unexpected command');
}

/** The claim's condition over an item (status, attempts left, lease free for `:owner` at `:now`). */
function claimable(item: Item | undefined, values: Values): boolean {
  return (
    item !== undefined &&
    (item.status === values[':queued'] || item.status === values[':processing']) &&
    (item.attempts as number) < (values[':max'] as number) &&
    (item.leaseOwner === undefined ||
      item.leaseOwner === values[':owner'] ||
      item.leaseUntil === undefined ||
      (item.leaseUntil as number) <= (values[':now'] as number))
  );
}

/** An item's strings and numbers in DynamoDB's wire format, as a failed condition's ALL_OLD carries it. */
function wire(item: Item): Record<string, { S: string } | { N: string }> {
  return Object.fromEntries(
    Object.entries(item).flatMap(
      ([name, value]): Array<[string, { S: string } | { N: string }]> =>
        typeof value === 'number'
          ? [[name, { N: String(value) }]]
          : typeof value === 'string'
            ? [[name, { S: value }]]
            : [],
    ),
  );
}
