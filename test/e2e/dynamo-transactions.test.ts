/**
 * TransactWriteItems on the local DynamoDB (local/stack/dynamo-transactions.ts in front of dynalite), through
 * the AWS SDK as the adapters send it: all or nothing, DynamoDB's cancellation reasons, idempotent tokens.
 */
import {
  GetItemCommand,
  PutItemCommand,
  TransactionCanceledException,
  TransactWriteItemsCommand,
  type TransactWriteItemsCommandInput,
} from '@aws-sdk/client-dynamodb';
import { type LocalDynamo, startDynalite } from './helpers/dynalite';

const TABLE = 'tx-table';
let dynamo: LocalDynamo;

beforeAll(async () => {
  dynamo = await startDynalite();
  await dynamo.createTable(TABLE);
});

afterAll(async () => {
  await dynamo?.close();
});

const get = async (pk: string) =>
  (
    await dynamo.client.send(
      new GetItemCommand({ TableName: TABLE, Key: { pk: { S: pk } }, ConsistentRead: true }),
    )
  ).Item;

const put = (pk: string, extra: Record<string, { S: string }> = {}, condition?: string) => ({
  Put: {
    TableName: TABLE,
    Item: { pk: { S: pk }, ...extra },
    ...(condition === undefined ? {} : { ConditionExpression: condition }),
  },
});

const transact = (
  input: Omit<TransactWriteItemsCommandInput, 'TransactItems'> & {
    TransactItems: TransactWriteItemsCommandInput['TransactItems'];
  },
) => dynamo.client.send(new TransactWriteItemsCommand(input));

describe('TransactWriteItems on the local DynamoDB', () => {
  it('writes every item, and reports twice the units of the same writes alone', async () => {
    const out = await transact({
      TransactItems: [put('a-1', {}, 'attribute_not_exists(pk)'), put('a-2'), put('a-3')],
      ReturnConsumedCapacity: 'TOTAL',
    });
    expect(await get('a-1')).toEqual({ pk: { S: 'a-1' } });
    expect(await get('a-3')).toEqual({ pk: { S: 'a-3' } });
    expect(out.ConsumedCapacity).toEqual([{ TableName: TABLE, CapacityUnits: 6, WriteCapacityUnits: 6 }]);
  });

  it('writes nothing when a condition fails, undoing the writes before it, and says which item failed', async () => {
    await dynamo.client.send(
      new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'b-held' }, owner: { S: 'first' } } }),
    );
    await dynamo.client.send(
      new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'b-old' }, value: { S: 'before' } } }),
    );
    const error = await transact({
      TransactItems: [
        put('b-new'),
        put('b-old', { value: { S: 'after' } }),
        {
          Put: {
            TableName: TABLE,
            Item: { pk: { S: 'b-held' }, owner: { S: 'second' } },
            ConditionExpression: 'attribute_not_exists(pk) OR #owner = :me',
            ExpressionAttributeNames: { '#owner': 'owner' },
            ExpressionAttributeValues: { ':me': { S: 'second' } },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          },
        },
        put('b-after'),
      ],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransactionCanceledException);
    expect((error as TransactionCanceledException).CancellationReasons).toEqual([
      { Code: 'None' },
      { Code: 'None' },
      {
        Code: 'ConditionalCheckFailed',
        Message: 'The conditional request failed',
        Item: { pk: { S: 'b-held' }, owner: { S: 'first' } },
      },
      { Code: 'None' },
    ]);
    expect(await get('b-new')).toBeUndefined();
    expect(await get('b-old')).toEqual({ pk: { S: 'b-old' }, value: { S: 'before' } });
    expect(await get('b-held')).toEqual({ pk: { S: 'b-held' }, owner: { S: 'first' } });
    expect(await get('b-after')).toBeUndefined();
  });

  it('undoes updates and deletes, and a condition check leaves no trace', async () => {
    await dynamo.client.send(
      new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'c-1' }, n: { S: 'one' } } }),
    );
    await dynamo.client.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'c-2' } } }));
    const error = await transact({
      TransactItems: [
        {
          Update: {
            TableName: TABLE,
            Key: { pk: { S: 'c-1' } },
            UpdateExpression: 'SET n = :two',
            ExpressionAttributeValues: { ':two': { S: 'two' } },
          },
        },
        { Delete: { TableName: TABLE, Key: { pk: { S: 'c-2' } } } },
        {
          ConditionCheck: {
            TableName: TABLE,
            Key: { pk: { S: 'c-absent' } },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          ConditionCheck: {
            TableName: TABLE,
            Key: { pk: { S: 'c-none' } },
            ConditionExpression: 'attribute_exists(pk)',
          },
        },
      ],
    }).catch((e: unknown) => e);
    expect((error as TransactionCanceledException).CancellationReasons?.map((r) => r.Code)).toEqual([
      'None',
      'None',
      'None',
      'ConditionalCheckFailed',
    ]);
    expect(await get('c-1')).toEqual({ pk: { S: 'c-1' }, n: { S: 'one' } });
    expect(await get('c-2')).toEqual({ pk: { S: 'c-2' } });
    expect(await get('c-absent')).toBeUndefined();
    expect(await get('c-none')).toBeUndefined();
  });

  it('refuses two operations on one item, and an empty or oversized transaction, writing nothing', async () => {
    await expect(transact({ TransactItems: [put('d-1'), put('d-1')] })).rejects.toMatchObject({
      name: 'ValidationException',
      message: expect.stringContaining('multiple operations on one item'),
    });
    await expect(
      transact({ TransactItems: Array.from({ length: 101 }, (_, i) => put(`d-${i + 10}`)) }),
    ).rejects.toMatchObject({ name: 'ValidationException' });
    await expect(transact({ TransactItems: [] })).rejects.toMatchObject({ name: 'ValidationException' });
    expect(await get('d-1')).toBeUndefined();
    expect(await get('d-10')).toBeUndefined();
  });

  it('answers a retry with the same client token as done, and another request under it as a mismatch', async () => {
    const request = {
      TransactItems: [put('e-1', {}, 'attribute_not_exists(pk)')],
      ClientRequestToken: 'token-e',
    };
    await transact(request);
    // Its condition would now fail: the token says it was done already.
    await expect(transact(request)).resolves.toBeDefined();
    await expect(
      transact({ TransactItems: [put('e-2')], ClientRequestToken: 'token-e' }),
    ).rejects.toMatchObject({ name: 'IdempotentParameterMismatchException' });
    expect(await get('e-2')).toBeUndefined();
  });

  it('still answers every other operation itself (dynalite)', async () => {
    await dynamo.client.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: 'f-1' } } }));
    expect(await get('f-1')).toEqual({ pk: { S: 'f-1' } });
  });
});
