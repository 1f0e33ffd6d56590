import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoServiceEstimates } from '../../../../functions/adapters/dynamodb/service-estimates';

/**
 * A table of one item per key behind `send`, evaluating the adapter's one condition (an age kept only when it
 * says more): enough to hold the adapter to its expressions.
 */
function fakeTable() {
  const items = new Map<string, Record<string, unknown>>();
  const send = async (command: unknown): Promise<unknown> => {
    if (command instanceof GetCommand) return { Item: items.get(String(command.input.Key?.pk)) };
    if (command instanceof UpdateCommand) {
      const input = command.input;
      const field = String(input.ExpressionAttributeNames?.['#age']);
      const age = input.ExpressionAttributeValues?.[':age'] as number;
      const item: Record<string, unknown> = items.get(String(input.Key?.pk)) ?? { pk: input.Key?.pk };
      const kept = item[field] as number | undefined;
      const lower = / > :age$/.test(String(input.ConditionExpression));
      expect(input.ConditionExpression).toBe(`attribute_not_exists(#age) OR #age ${lower ? '>' : '<'} :age`);
      if (kept !== undefined && (lower ? kept <= age : kept >= age)) {
        throw new ConditionalCheckFailedException({ message: 'failed', $metadata: {} });
      }
      items.set(String(input.Key?.pk), {
        ...item,
        [field]: age,
        kind: input.ExpressionAttributeValues?.[':kind'],
      });
      return {};
    }
    throw new Error('unexpected command');
  };
  return { items, client: { send } as unknown as DynamoDBDocumentClient };
}

describe('DynamoServiceEstimates', () => {
  it('keeps the youngest refused age and the oldest served one, per service, in an item of its own', async () => {
    const table = fakeTable();
    const estimates = new DynamoServiceEstimates(table.client, 'jobs');
    expect(await estimates.linkAges('https://a.test')).toBeUndefined();
    await estimates.recordLinkAge('https://a.test', 'refused', 9_000);
    await estimates.recordLinkAge('https://a.test', 'refused', 4_000);
    await estimates.recordLinkAge('https://a.test', 'refused', 6_000);
    await estimates.recordLinkAge('https://a.test', 'served', 300);
    await estimates.recordLinkAge('https://a.test', 'served', 100);
    expect(await estimates.linkAges('https://a.test')).toEqual({ refusedAtMs: 4_000, servedAtMs: 300 });
    expect(await estimates.linkAges('https://b.test')).toBeUndefined();
    expect(table.items.get('service#https://a.test')).toMatchObject({ kind: 'service' });
  });

  it('tells a table that fails as a job store error (retryable)', async () => {
    const client = {
      send: async () => {
        throw new Error('socket hang up');
      },
    } as unknown as DynamoDBDocumentClient;
    const estimates = new DynamoServiceEstimates(client, 'jobs');
    await expect(estimates.recordLinkAge('s', 'refused', 1)).rejects.toMatchObject({
      code: 'JOB_STORE_UNAVAILABLE',
    });
    await expect(estimates.linkAges('s')).rejects.toMatchObject({ code: 'JOB_STORE_UNAVAILABLE' });
  });
});
