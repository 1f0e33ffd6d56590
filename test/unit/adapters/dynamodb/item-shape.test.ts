/** How deliveries and jobs lie in the table: packed seals, and jobs kept out of the by-delivery index. */
import { DynamoJobRepository } from '../../../../functions/adapters/dynamodb/job-table';
import { jobItem, packSeal, toJob, unpackSeal } from '../../../../functions/adapters/dynamodb/keys';
import { sealJson } from '../../../../functions/commons/seal';
import { JOB_TABLE } from '../../../../functions/config/table-contract';
import { type DeliveryRecord, newJobRecords } from '../../../../functions/core/job';
import { FakeJobTable } from './fake-document-client';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const clock = { now: () => NOW, retentionSeconds: 86_400, enqueueGraceMs: 60_000 };

const delivery = (deliveryId: string, sealedPayload: string): DeliveryRecord => ({
  integration: 'notes',
  deliveryId,
  receivedAt: '2026-03-01T11:59:59.000Z',
  jobs: [
    { jobId: `${deliveryId}-a`, rule: 'invoice', templateId: '9001' },
    { jobId: `${deliveryId}-b`, rule: 'receipt', templateId: '9002' },
  ],
  sealedPayload,
});

describe('packSeal and unpackSeal', () => {
  it('keep a seal as its head and its body bytes, a quarter smaller, and give it back exactly', () => {
    for (const value of [{}, { text: 'x'.repeat(5_000) }, { nested: [1, 2, 3] }]) {
      const sealed = sealJson(value, 'a-secret', 'ctx');
      const packed = packSeal(sealed);
      expect(packed).toBeInstanceOf(Uint8Array);
      expect((packed as Uint8Array).length).toBeLessThan(sealed.length);
      expect(unpackSeal(packed)).toBe(sealed);
    }
  });

  it('keep anything that is not a seal as text, and read text written before packing as it is', () => {
    expect(packSeal('sealed-payload')).toBe('sealed-payload');
    expect(packSeal('v2.a.b.c.d')).toBe('v2.a.b.c.d');
    // A body whose base64url would not come back the same (not canonical) stays text.
    expect(packSeal('v2.a.b.AB')).toBe('v2.a.b.AB');
    expect(unpackSeal('v2.iv.tag.body')).toBe('v2.iv.tag.body');
    expect(unpackSeal(undefined)).toBe('');
    expect(unpackSeal(new Uint8Array([1, 2, 3]))).toBe('');
  });
});

describe('job items', () => {
  it('carry their delivery id as `delivery`, outside the by-delivery index, and read back whole', () => {
    const [job] = newJobRecords(delivery('d-1', 'p'), NOW);
    const item = jobItem(job as never, clock);
    expect(item[JOB_TABLE.deliveryIdKey]).toBeUndefined();
    expect(item.delivery).toBe('d-1');
    expect(toJob(item)).toEqual(job);
    // Items written before carry `deliveryId` itself.
    const { delivery: _delivery, ...older } = item;
    expect(toJob({ ...older, deliveryId: 'd-1' })).toEqual(job);
  });
});

describe('a delivery and its jobs in the table', () => {
  it('stores the payload packed, and lists the jobs of a delivery id from its record and the index', async () => {
    const table = new FakeJobTable();
    const repository = new DynamoJobRepository(table.client, 'jobs-table', { now: () => NOW });
    const sealed = sealJson({ order: 42 }, 'a-secret', 'notes/d-1');
    const record = delivery('d-1', sealed);
    await repository.createDelivery(record, newJobRecords(record, NOW));
    expect(table.items.get('delivery#notes#d-1')?.sealedPayload).toBeInstanceOf(Uint8Array);
    await expect(repository.getDelivery('notes', 'd-1')).resolves.toMatchObject({ sealedPayload: sealed });
    // A job written before jobs left the index: found through it.
    const [legacy] = newJobRecords(
      { ...record, jobs: [{ jobId: 'old', rule: 'invoice', templateId: '9' }] },
      NOW,
    );
    const { delivery: _delivery, ...older } = jobItem(legacy as never, clock);
    table.items.set('job#old', { ...older, deliveryId: 'd-1' });
    const page = await repository.listJobs({ deliveryId: 'd-1' });
    expect(page.jobs.map((job) => job.jobId).sort()).toEqual(['d-1-a', 'd-1-b', 'old']);
    expect(page.jobs.every((job) => job.deliveryId === 'd-1')).toBe(true);
  });
});

describe('the claim keeping a lease', () => {
  it('is one write when the lease is kept, two when it must move, one when the job is held by another', async () => {
    const table = new FakeJobTable();
    const repository = new DynamoJobRepository(table.client, 'jobs-table', { now: () => NOW });
    const record = delivery('d-1', 'p');
    const jobs = newJobRecords(record, NOW);
    await repository.createDelivery(record, jobs);
    const lease = jobs[0]?.leaseUntil as number;
    const claim = (jobId: string, owner: string, from: number) =>
      repository.claimJob({
        jobId,
        owner,
        leaseUntil: NOW + 1_800_000,
        nowMs: NOW,
        maxAttempts: 5,
        keepLeaseWithin: { from, to: lease + 1 },
      });
    const updates = () => table.sent.filter((s) => s.name === 'Update').length;
    await expect(claim('d-1-a', 'm-1', lease - 1)).resolves.toMatchObject({ leaseUntil: lease });
    expect(updates()).toBe(1);
    await expect(claim('d-1-b', 'm-2', lease + 1)).resolves.toMatchObject({
      leaseUntil: NOW + 1_800_000,
    });
    expect(updates()).toBe(3);
    await expect(claim('d-1-a', 'm-3', lease - 1)).resolves.toBeUndefined();
    expect(updates()).toBe(4);
  });
});
