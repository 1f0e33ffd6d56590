/** The bench's DynamoDB write count (bench/dynamo-writes.ts) runs a stored job's writes on dynalite and prices them. */
import { measureDynamoWrites } from '../../bench/dynamo-writes';

describe('measureDynamoWrites', () => {
  it('reports the write units per stored job on the table and on each index, summing to the total', async () => {
    const writes = await measureDynamoWrites({ jobsPerDelivery: 2, contentKey: true }, 2);
    const { total, table, ...indexes } = writes;
    expect(Object.keys(indexes).sort()).toEqual(['by-delivery', 'jobs-by-time', 'open-jobs']);
    // Per job at least: its put, its claim and the write that stores it (1 each), and its share of the delivery.
    expect(table).toBeGreaterThanOrEqual(4);
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

  it('keeps a stored job within 12 write units, table and indexes, for one-job and two-job deliveries', async () => {
    // Issue 37's target: what the cost model's DynamoDB row stands on. A change that adds a write fails here.
    const one = await measureDynamoWrites({ jobsPerDelivery: 1, contentKey: false }, 4);
    const two = await measureDynamoWrites({ jobsPerDelivery: 2, contentKey: true }, 4);
    expect(one.total).toBeLessThanOrEqual(12);
    expect(two.total).toBeLessThanOrEqual(12);
    // The claim keeps the first-pickup lease: the open index is written twice per job (in, out), no more.
    expect(one['open-jobs']).toBe(2);
  });
});
