/** The bench's DynamoDB write count (bench/dynamo-writes.ts) runs a stored job's writes on dynalite and prices them. */
import { measureDynamoWrites } from '../../bench/dynamo-writes';

describe('measureDynamoWrites', () => {
  it('reports the write units per stored job on the table and on each index, summing to the total', async () => {
    const writes = await measureDynamoWrites({ jobsPerDelivery: 2, contentKey: true }, 2);
    const { total, table, ...indexes } = writes;
    expect(Object.keys(indexes).sort()).toEqual(['by-delivery', 'jobs-by-time', 'open-jobs']);
    // Per job at least: its transactional put (2), claim, checkpoint and stored updates (1 each).
    expect(table).toBeGreaterThanOrEqual(5);
    for (const units of Object.values(indexes)) expect(units).toBeGreaterThan(0);
    expect(total).toBeCloseTo(table + Object.values(indexes).reduce((sum, units) => sum + units, 0), 10);
  });

  it('puts no delivery recorded with its jobs in the open index: its open-index writes are its jobs’ own', async () => {
    const two = await measureDynamoWrites({ jobsPerDelivery: 2, contentKey: false }, 2);
    const one = await measureDynamoWrites({ jobsPerDelivery: 1, contentKey: false }, 2);
    expect(one['open-jobs']).toBe(two['open-jobs']);
    // The delivery's own writes are shared by its jobs: one job bears them alone.
    expect(one.table).toBeGreaterThan(two.table);
  });
});
