/** The pricing of one write by the bench's DynamoDB write count (bench/dynamo-writes.ts). */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { price } from '../../../bench/dynamo-writes';

const job = (extra: Record<string, AttributeValue> = {}): Record<string, AttributeValue> => ({
  pk: { S: 'job#a' },
  kind: { S: 'job' },
  deliveryId: { S: 'd-1' },
  integration: { S: 'notes' },
  status: { S: 'queued' },
  listPk: { S: 'jobs#2026-03-01#0' },
  listSk: { S: '2026-03-01T00:00:00.000Z#a' },
  openPk: { S: 'open#1' },
  leaseUntil: { N: '1000' },
  ...extra,
});

describe('price', () => {
  it('charges a new item once on the table and once on each index it enters, twice in a transaction', () => {
    expect(Object.fromEntries(price(undefined, job(), false))).toEqual({
      table: 1,
      'open-jobs': 1,
      'jobs-by-time': 1,
      'by-delivery': 1,
    });
    expect(price(undefined, job(), true).get('table')).toBe(2);
  });

  it('charges an index key change twice, a projected attribute change once, and an untouched index nothing', () => {
    const claimed = price(job(), job({ status: { S: 'processing' }, leaseUntil: { N: '2000' } }), false);
    expect(Object.fromEntries(claimed)).toEqual({ table: 1, 'open-jobs': 2, 'jobs-by-time': 1 });
  });

  it('charges an item leaving an index once, and bills the table on the larger of the two items', () => {
    const big = job({ files: { S: 'x'.repeat(2500) } });
    const { openPk: _o, leaseUntil: _l, ...closed } = big;
    expect(Object.fromEntries(price(big, { ...closed, status: { S: 'stored' } }, false))).toEqual({
      table: 3,
      'open-jobs': 1,
      'jobs-by-time': 1,
    });
  });
});
