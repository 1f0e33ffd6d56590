/** The job repository on DynamoDB, against a fake document client that keeps the table in a Map. */

import {
  DynamoJobRepository,
  OPEN_JOBS_INDEX,
  openShard,
} from '../../../../functions/adapters/dynamodb/job-table';
import { DocrelayError } from '../../../../functions/commons/errors';
import { JOB_TABLE } from '../../../../functions/config/table-contract';
import { JobConflictError } from '../../../../functions/core/errors';
import {
  type DeliveryRecord,
  type JobRecord,
  newJobRecord,
  transitions,
} from '../../../../functions/core/job';
import type { JobClaim } from '../../../../functions/ports/job-repository';
import { scanFailedJobs } from '../../../../local/stack/failed-jobs';
import { conditionFailed, FakeJobTable } from './fake-document-client';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const DAY_S = 86_400;

const delivery = (deliveryId = 'd-1', overrides: Partial<DeliveryRecord> = {}): DeliveryRecord => ({
  integration: 'notes',
  deliveryId,
  receivedAt: '2026-03-01T11:59:59.000Z',
  jobs: [{ jobId: `${deliveryId}-job`, rule: 'invoice', templateId: '9001' }],
  sealedPayload: 'sealed-payload',
  ...overrides,
});

const job = (jobId = 'd-1-job'): JobRecord =>
  newJobRecord('notes', 'd-1', '2026-03-01T11:59:59.000Z', NOW, {
    jobId,
    rule: 'invoice',
    templateId: '9001',
  });

function setup(options: { retentionDays?: number; enqueueGraceMs?: number } = {}) {
  const table = new FakeJobTable();
  let now = NOW;
  const repository = new DynamoJobRepository(table.client, 'jobs-table', { ...options, now: () => now });
  return {
    table,
    repository,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

const storeError = (operation: string) =>
  expect.objectContaining({
    code: 'JOB_STORE_UNAVAILABLE',
    retryable: true,
    message: `the job table could not ${operation}`,
  });

describe('openShard', () => {
  it('is stable for a key and one of the configured shards', () => {
    expect(openShard('job#abc')).toBe(openShard('job#abc'));
    expect(openShard('job#abc')).toMatch(new RegExp(`^open#[0-${JOB_TABLE.openShards - 1}]$`));
  });

  it('spreads keys over every shard', () => {
    const shards = new Set(Array.from({ length: 64 }, (_, i) => openShard(`job#${i}`)));
    expect(shards.size).toBe(JOB_TABLE.openShards);
  });
});

describe('DynamoJobRepository.createDelivery', () => {
  it('records the delivery closed (outside the open index), with a TTL, then its jobs, in conditional puts and no transaction', async () => {
    const { table, repository } = setup({ retentionDays: 2, enqueueGraceMs: 5_000 });
    await expect(
      repository.createDelivery(delivery(), [{ ...job(), closesDelivery: true }]),
    ).resolves.toEqual({ created: true });
    // A transaction bills every item twice: the delivery and its job are two plain puts.
    expect(table.sent.map((s) => s.name)).toEqual(['Put', 'Put']);
    const item = table.items.get('delivery#notes#d-1');
    expect(item).toMatchObject({
      kind: 'delivery',
      ttl: NOW / 1000 + 2 * DAY_S,
      sealedPayload: 'sealed-payload',
    });
    // Each job's own first-pickup lease covers a message that never went out: nothing to close later.
    expect(item).not.toHaveProperty('openPk');
    expect(item).not.toHaveProperty('leaseUntil');
    expect(table.items.get('job#d-1-job')).not.toHaveProperty('closesDelivery');
    expect(table.items.get('job#d-1-job')).toMatchObject({
      kind: 'job',
      status: 'queued',
      openPk: openShard('job#d-1-job'),
      leaseUntil: job().leaseUntil,
    });
    // An open job has no TTL: it must not expire before it is final.
    expect(table.items.get('job#d-1-job')).not.toHaveProperty('ttl');
    const [deliveryPut, jobPut] = table.inputs('Put');
    expect(deliveryPut).toMatchObject({
      TableName: 'jobs-table',
      Item: { pk: 'delivery#notes#d-1' },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    // A job is put only where none is: the sender's retry may have written it meanwhile.
    expect(jobPut).toMatchObject({
      Item: { pk: 'job#d-1-job' },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
  });

  it('records a delivery without all its jobs open in its shard, with the enqueue grace as lease', async () => {
    const { table, repository } = setup({ enqueueGraceMs: 5_000 });
    await repository.createDelivery(delivery(), []);
    expect(table.items.get('delivery#notes#d-1')).toMatchObject({
      openPk: openShard('delivery#notes#d-1'),
      leaseUntil: NOW + 5_000,
    });
  });

  it('uses a 30-day retention and a 60 s enqueue grace by default', async () => {
    const { table, repository } = setup();
    await repository.createDelivery(delivery(), []);
    expect(table.items.get('delivery#notes#d-1')).toMatchObject({
      leaseUntil: NOW + 60_000,
      ttl: NOW / 1000 + 30 * DAY_S,
    });
  });

  it('writes a delivery that is already enqueued outside the open index', async () => {
    const { table, repository } = setup();
    await repository.createDelivery(delivery('d-2', { enqueuedAt: '2026-03-01T12:00:00.000Z' }), []);
    const item = table.items.get('delivery#notes#d-2');
    expect(item).not.toHaveProperty('openPk');
    expect(item).not.toHaveProperty('leaseUntil');
  });

  it('returns the delivery seen before and writes no job for a duplicate', async () => {
    const { table, repository } = setup();
    await repository.createDelivery(delivery(), [job()]);
    const result = await repository.createDelivery(delivery('d-1', { sealedPayload: 'other' }), [
      job('other'),
    ]);
    expect(result).toEqual({ created: false, duplicateOf: 'd-1', existing: delivery() });
    expect(table.items.has('job#other')).toBe(false);
    expect(table.items.get('delivery#notes#d-1')?.sealedPayload).toBe('sealed-payload');
  });

  it('claims the content key first, and answers the same content under another id as a duplicate of its holder', async () => {
    const { table, repository } = setup();
    await repository.createDelivery(delivery(), [job()], 'content-1');
    expect(table.sent.map((s) => s.name)).toEqual(['Put', 'Put', 'Put']);
    expect(table.inputs('Put')[0]).toMatchObject({
      Item: { pk: 'content#notes#content-1' },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    expect(table.items.get('content#notes#content-1')).toMatchObject({ kind: 'content', holder: 'd-1' });
    table.sent.length = 0;
    const replay = await repository.createDelivery(delivery('d-9'), [job('j-9')], 'content-1');
    expect(replay).toEqual({ created: false, duplicateOf: 'd-1' });
    // The holder comes with the failed put: no read.
    expect(table.sent.map((s) => s.name)).toEqual(['Put']);
    expect(table.items.has('delivery#notes#d-9')).toBe(false);
    expect(table.items.has('job#j-9')).toBe(false);
    // The same delivery again (its sender's retry): its own content key holds, the delivery is the duplicate.
    const retry = await repository.createDelivery(delivery(), [job('j-10')], 'content-1');
    expect(retry).toEqual({ created: false, duplicateOf: 'd-1', existing: delivery() });
    expect(table.items.has('job#j-10')).toBe(false);
    // Other content under a new id is a new delivery.
    await expect(repository.createDelivery(delivery('d-2'), [job('j-2')], 'content-2')).resolves.toEqual({
      created: true,
    });
  });

  it('keeps content keys out of the by-delivery index, and still honours keys written with `deliveryId`', async () => {
    const { table, repository } = setup();
    await repository.createDelivery(delivery(), [job()], 'content-1');
    expect(table.items.get('content#notes#content-1')).not.toHaveProperty('deliveryId');
    table.items.set('content#notes#old', { pk: 'content#notes#old', kind: 'content', deliveryId: 'd-old' });
    await expect(repository.createDelivery(delivery('d-5'), [job('j-5')], 'old')).resolves.toEqual({
      created: false,
      duplicateOf: 'd-old',
    });
    table.items.set('content#notes#mine', { pk: 'content#notes#mine', kind: 'content', deliveryId: 'd-6' });
    await expect(repository.createDelivery(delivery('d-6'), [job('j-6')], 'mine')).resolves.toEqual({
      created: true,
    });
  });

  it('reads the holder when the failed put brings no old item back (an emulator)', async () => {
    const { table, repository } = setup();
    table.items.set('content#notes#c', { pk: 'content#notes#c', kind: 'content', holder: 'd-0' });
    table.failNext('Put', conditionFailed());
    await expect(repository.createDelivery(delivery(), [job()], 'c')).resolves.toEqual({
      created: false,
      duplicateOf: 'd-0',
    });
    expect(table.sent.map((s) => s.name)).toEqual(['Put', 'Get']);
  });

  it('records a delivery with more than a hundred jobs the same way: closed, then its jobs 25 puts at a time', async () => {
    const { table, repository } = setup();
    const plans = Array.from({ length: 120 }, (_, i) => ({
      jobId: `j-${i}`,
      rule: 'invoice',
      templateId: '9001',
    }));
    const jobs = plans.map((plan) => job(plan.jobId));
    await repository.createDelivery(delivery('d-1', { jobs: plans }), jobs, 'content-1');
    expect(table.sent.map((s) => s.name)).toEqual(Array(2 + 120).fill('Put'));
    expect(table.sent.some((s) => s.name === 'TransactWrite' || s.name === 'BatchWrite')).toBe(false);
    expect(plans.every(({ jobId }) => table.items.has(`job#${jobId}`))).toBe(true);
    expect(table.items.get('delivery#notes#d-1')).not.toHaveProperty('openPk');
    // Its duplicates, by id and by content, write no job.
    await expect(repository.createDelivery(delivery(), jobs, 'content-1')).resolves.toMatchObject({
      created: false,
      duplicateOf: 'd-1',
    });
    await expect(repository.createDelivery(delivery('d-9'), jobs, 'content-1')).resolves.toEqual({
      created: false,
      duplicateOf: 'd-1',
    });
    expect(table.items.has('delivery#notes#d-9')).toBe(false);
  });

  it('fails retryably when a job cannot be written, leaving the delivery recorded for its retry to complete', async () => {
    const { table, repository } = setup();
    const plans = ['a', 'b'].map((jobId) => ({ jobId, rule: 'invoice', templateId: '9001' }));
    const cause = new Error('ProvisionedThroughputExceededException');
    table.failNext('Put', cause, 2);
    const error = await repository
      .createDelivery(delivery('d-1', { jobs: plans }), [job('a'), job('b')], 'content-1')
      .catch((e: unknown) => e);
    expect(error).toEqual(storeError('record jobs'));
    expect((error as Error).cause).toBe(cause);
    expect(table.items.has('delivery#notes#d-1')).toBe(true);
    expect(table.items.has('job#a')).toBe(false);
    // The retry finds the delivery (a duplicate) and its missing job: ensureJobs writes it.
    await expect(
      repository.createDelivery(delivery('d-1', { jobs: plans }), [job('a'), job('b')], 'content-1'),
    ).resolves.toMatchObject({ created: false, duplicateOf: 'd-1' });
    await expect(repository.ensureJobs([job('a'), job('b')])).resolves.toEqual({
      created: ['a'],
      untouched: ['b'],
    });
  });

  it('leaves a job written meanwhile by the retry that completed its delivery as it is', async () => {
    const { table, repository } = setup();
    table.items.set('job#d-1-job', { pk: 'job#d-1-job', kind: 'job', status: 'processing', version: 1 });
    await expect(repository.createDelivery(delivery(), [job()])).resolves.toEqual({ created: true });
    expect(table.items.get('job#d-1-job')).toMatchObject({ status: 'processing', version: 1 });
  });

  it('fails retryably when the delivery it collided with cannot be read back', async () => {
    const { table, repository } = setup();
    table.failNext('Put', conditionFailed());
    const error = await repository.createDelivery(delivery(), [job()]).catch((e: unknown) => e);
    expect(error).toEqual(storeError('read the delivery it found'));
    expect(table.items.size).toBe(0);
  });

  it.each([
    ['the table refuses the delivery', 'record the delivery', undefined],
    ['the table refuses the content key', 'claim a content key', 'content-1'],
  ])('fails retryably, keeping the cause, when %s', async (_when, operation, contentKey) => {
    const { table, repository } = setup();
    const cause = new Error('ProvisionedThroughputExceededException');
    table.failNext('Put', cause);
    const error = await repository.createDelivery(delivery(), [job()], contentKey).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DocrelayError);
    expect(error).toEqual(storeError(operation));
    expect((error as Error).cause).toBe(cause);
    expect(table.items.size).toBe(0);
  });
});

describe('DynamoJobRepository.ensureJobs', () => {
  it('writes missing jobs and leaves an existing one as it is', async () => {
    const { table, repository } = setup();
    await repository.ensureJobs([job('a')]);
    table.items.set('job#a', { ...(table.items.get('job#a') as object), status: 'processing' });
    await repository.ensureJobs([job('a'), job('b')]);
    expect(table.items.get('job#a')).toMatchObject({ status: 'processing' });
    expect(table.items.get('job#b')).toMatchObject({ status: 'queued' });
  });

  it('fails retryably when a job cannot be written', async () => {
    const { table, repository } = setup();
    table.failNext('Put', new Error('network'));
    await expect(repository.ensureJobs([job('a')])).rejects.toEqual(storeError('record a job'));
  });

  it('says which jobs it wrote and which existing ones no worker has touched, from one batch read', async () => {
    const { table, repository } = setup();
    await repository.ensureJobs([job('a'), job('b')]);
    const claimed = (await repository.getJob('b')) as JobRecord;
    await repository.updateJob(claimed, transitions.claim(claimed, 'w', NOW + 60_000));
    table.sent.length = 0;
    await expect(repository.ensureJobs([job('a'), job('b'), job('c')])).resolves.toEqual({
      created: ['c'],
      untouched: ['a'],
    });
    expect(table.inputs('BatchGet')[0]).toMatchObject({
      RequestItems: {
        'jobs-table': { ConsistentRead: true, Keys: [{ pk: 'job#a' }, { pk: 'job#b' }, { pk: 'job#c' }] },
      },
    });
    expect(table.inputs('Put')).toHaveLength(1);
  });

  it('counts a job written meanwhile by another caller as neither written nor waiting', async () => {
    const { table, repository } = setup();
    table.failNext('Put', conditionFailed());
    await expect(repository.ensureJobs([job('a')])).resolves.toEqual({ created: [], untouched: [] });
  });
});

describe('DynamoJobRepository.ensureJobs reading existing jobs', () => {
  it('lists the existing jobs still waiting for their first pickup, writing none of them', async () => {
    const { table, repository } = setup();
    await repository.ensureJobs([job('a'), job('b')]);
    const claimed = (await repository.getJob('a')) as JobRecord;
    await repository.updateJob(claimed, transitions.claim(claimed, 'w', NOW + 60_000));
    const writes = table.sent.length;
    await expect(repository.ensureJobs([job('a'), job('b')])).resolves.toEqual({
      created: [],
      untouched: ['b'],
    });
    expect(table.sent.slice(writes).map((s) => s.name)).toEqual(['BatchGet']);
  });

  it('reads again the keys the batch left unprocessed, and fails retryably on an error', async () => {
    const { table, repository } = setup();
    await repository.ensureJobs([job('a'), job('b')]);
    table.unprocessedBatches = 1;
    await expect(repository.ensureJobs([job('a'), job('b')])).resolves.toEqual({
      created: [],
      untouched: ['a', 'b'],
    });
    table.failNext('BatchGet', new Error('network'));
    await expect(repository.ensureJobs([job('a')])).rejects.toEqual(storeError('read jobs'));
  });
});

describe('DynamoJobRepository.markDeliverySendFailed', () => {
  it('notes the failed send on the open delivery, read back with it', async () => {
    const { repository } = setup();
    await repository.createDelivery(delivery(), []);
    await repository.markDeliverySendFailed('notes', 'd-1', '2026-03-01T12:00:00.500Z');
    await expect(repository.getDelivery('notes', 'd-1')).resolves.toEqual({
      ...delivery(),
      sendFailedAt: '2026-03-01T12:00:00.500Z',
    });
  });

  it('opens a delivery recorded closed again for its grace, so the reconciler completes it', async () => {
    const { table, repository, advance } = setup({ enqueueGraceMs: 5_000 });
    await repository.createDelivery(delivery(), [job()]);
    advance(1_000);
    await repository.markDeliverySendFailed('notes', 'd-1', '2026-03-01T12:00:00.500Z');
    expect(table.items.get('delivery#notes#d-1')).toMatchObject({
      openPk: openShard('delivery#notes#d-1'),
      leaseUntil: NOW + 6_000,
    });
    await expect(repository.getDelivery('notes', 'd-1')).resolves.toEqual({
      ...delivery(),
      sendFailedAt: '2026-03-01T12:00:00.500Z',
    });
  });

  it('fails retryably for a delivery that is not there', async () => {
    const { repository } = setup();
    await expect(repository.markDeliverySendFailed('notes', 'gone', 'x')).rejects.toEqual(
      storeError('note the delivery unsent'),
    );
  });
});

describe('DynamoJobRepository.claimJob', () => {
  const claim = (overrides: Partial<JobClaim> = {}): JobClaim => ({
    jobId: 'd-1-job',
    owner: 'm-1',
    leaseUntil: NOW + 60_000,
    nowMs: NOW,
    maxAttempts: 3,
    ...overrides,
  });

  it('claims a queued job in one write and returns it as written, as the claim transition would', async () => {
    const { table, repository } = setup();
    await repository.createDelivery(delivery(), [job()]);
    const claimed = await repository.claimJob(claim());
    // The same claim the long way, read and then written conditionally on its version, in another table.
    const other = setup();
    await other.repository.createDelivery(delivery(), [job()]);
    const viaTransition = await other.repository.updateJob(
      job(),
      transitions.claim(job(), 'm-1', NOW + 60_000),
    );
    expect(claimed).toEqual(viaTransition);
    expect(table.items.get('job#d-1-job')).toEqual(other.table.items.get('job#d-1-job'));
    expect(table.items.get('job#d-1-job')).toMatchObject({ status: 'processing', attempts: 1, version: 1 });
  });

  it('takes over a lease that ran out, and claims again for the message that holds it', async () => {
    const { repository } = setup();
    await repository.createDelivery(delivery(), [job()]);
    await repository.claimJob(claim({ owner: 'm-dead' }));
    await expect(repository.claimJob(claim({ owner: 'm-dead' }))).resolves.toMatchObject({ attempts: 2 });
    await expect(repository.claimJob(claim({ owner: 'm-new', nowMs: NOW + 60_000 }))).resolves.toMatchObject({
      leaseOwner: 'm-new',
      attempts: 3,
      version: 3,
    });
  });

  it('refuses, writing nothing, a job held by another, out of attempts, checkpointed, final or missing', async () => {
    const { table, repository } = setup();
    await repository.createDelivery(delivery(), [job()]);
    await repository.claimJob(claim({ owner: 'm-holder' }));
    const held = structuredClone(table.items.get('job#d-1-job'));
    await expect(repository.claimJob(claim({ owner: 'm-2' }))).resolves.toBeUndefined();
    await expect(
      repository.claimJob(claim({ nowMs: NOW + 60_000, maxAttempts: 1 })),
    ).resolves.toBeUndefined();
    expect(table.items.get('job#d-1-job')).toEqual(held);
    for (const status of ['created', 'stored', 'failed'] as const) {
      table.items.set('job#d-1-job', { ...held, status });
      await expect(repository.claimJob(claim({ nowMs: NOW + 60_000 }))).resolves.toBeUndefined();
    }
    await expect(repository.claimJob(claim({ jobId: 'no-such-job' }))).resolves.toBeUndefined();
    expect(table.items.has('job#no-such-job')).toBe(false);
  });

  it('fails retryably on an error of the table', async () => {
    const { table, repository } = setup();
    table.failNext('Update', new Error('network'));
    await expect(repository.claimJob(claim())).rejects.toEqual(storeError('claim a job'));
  });
});

describe('DynamoJobRepository.closeDelivery', () => {
  it('takes an open delivery out of the open index, once, returning it as written', async () => {
    const { table, repository } = setup();
    await repository.createDelivery(delivery(), []);
    await expect(repository.closeDelivery('notes', 'd-1', '2026-03-01T12:00:02.000Z')).resolves.toEqual({
      ...delivery(),
      enqueuedAt: '2026-03-01T12:00:02.000Z',
    });
    expect(table.items.get('delivery#notes#d-1')).toMatchObject({ enqueuedAt: '2026-03-01T12:00:02.000Z' });
    expect(table.items.get('delivery#notes#d-1')).not.toHaveProperty('openPk');
    // Closed already (a replayed first pickup): nothing changes, and nothing is returned.
    await expect(
      repository.closeDelivery('notes', 'd-1', '2026-03-01T12:00:09.000Z'),
    ).resolves.toBeUndefined();
    expect(table.items.get('delivery#notes#d-1')).toMatchObject({ enqueuedAt: '2026-03-01T12:00:02.000Z' });
  });

  it('leaves a delivery whose ingest noted a failed send open, and fails retryably on an error', async () => {
    const { table, repository } = setup();
    await repository.createDelivery(delivery(), []);
    await repository.markDeliverySendFailed('notes', 'd-1', '2026-03-01T12:00:00.500Z');
    await repository.closeDelivery('notes', 'd-1', '2026-03-01T12:00:02.000Z');
    expect(table.items.get('delivery#notes#d-1')).toHaveProperty('openPk');
    table.failNext('Update', new Error('network'));
    await expect(repository.closeDelivery('notes', 'd-1', 'x')).rejects.toEqual(
      storeError('close the delivery'),
    );
  });
});

describe('DynamoJobRepository.getDelivery and markDeliveryEnqueued', () => {
  it('reads a delivery back as it was recorded, strongly consistent', async () => {
    const { table, repository } = setup();
    await repository.createDelivery(delivery(), []);
    await expect(repository.getDelivery('notes', 'd-1')).resolves.toEqual(delivery());
    expect(table.inputs('Get')[0]).toMatchObject({ Key: { pk: 'delivery#notes#d-1' }, ConsistentRead: true });
  });

  it('is undefined for a delivery never seen', async () => {
    const { repository } = setup();
    await expect(repository.getDelivery('notes', 'nope')).resolves.toBeUndefined();
  });

  it('reads a damaged item with safe defaults (no jobs, no payload)', async () => {
    const { table, repository } = setup();
    table.items.set('delivery#notes#odd', {
      pk: 'delivery#notes#odd',
      integration: 'notes',
      deliveryId: 'odd',
      receivedAt: 'x',
    });
    await expect(repository.getDelivery('notes', 'odd')).resolves.toEqual({
      integration: 'notes',
      deliveryId: 'odd',
      receivedAt: 'x',
      jobs: [],
      sealedPayload: '',
    });
  });

  it('takes an enqueued delivery out of the open index', async () => {
    const { table, repository } = setup();
    await repository.createDelivery(delivery(), []);
    await repository.markDeliveryEnqueued('notes', 'd-1', '2026-03-01T12:00:01.000Z');
    const item = table.items.get('delivery#notes#d-1');
    expect(item).toMatchObject({ enqueuedAt: '2026-03-01T12:00:01.000Z' });
    expect(item).not.toHaveProperty('openPk');
    expect(item).not.toHaveProperty('leaseUntil');
    await expect(repository.getDelivery('notes', 'd-1')).resolves.toEqual({
      ...delivery(),
      enqueuedAt: '2026-03-01T12:00:01.000Z',
    });
  });

  it('fails retryably when the delivery is gone or the table fails', async () => {
    const { table, repository } = setup();
    await expect(repository.markDeliveryEnqueued('notes', 'gone', 'x')).rejects.toEqual(
      storeError('mark the delivery enqueued'),
    );
    table.failNext('Get', new Error('timeout'));
    await expect(repository.getDelivery('notes', 'd-1')).rejects.toEqual(storeError('read a delivery'));
  });
});

describe('DynamoJobRepository.getJob and updateJob', () => {
  it('reads a job without the table attributes', async () => {
    const { repository } = setup();
    await repository.ensureJobs([job()]);
    await expect(repository.getJob('d-1-job')).resolves.toEqual(job());
    await expect(repository.getJob('missing')).resolves.toBeUndefined();
  });

  it('writes the changes conditionally on the version read and returns the new record', async () => {
    const { table, repository, advance } = setup();
    await repository.ensureJobs([job()]);
    advance(1_000);
    const claimed = await repository.updateJob(job(), transitions.claim(job(), 'msg-1', NOW + 90_000));
    expect(claimed).toMatchObject({ status: 'processing', attempts: 1, leaseOwner: 'msg-1', version: 1 });
    expect(claimed.updatedAt).toBe(new Date(NOW + 1_000).toISOString());
    await expect(repository.getJob('d-1-job')).resolves.toEqual(claimed);
    const update = table.inputs('Update')[0] as Record<string, unknown>;
    expect(update).toMatchObject({
      ConditionExpression: '#version = :expected',
      ExpressionAttributeValues: expect.objectContaining({ ':expected': 0 }),
    });
    expect(update.UpdateExpression).not.toContain('REMOVE');
    expect(table.items.get('job#d-1-job')).toMatchObject({ leaseUntil: NOW + 90_000 });
  });

  it('removes attributes set to undefined, and moves a final job out of the open index with a TTL', async () => {
    const { table, repository } = setup();
    await repository.ensureJobs([job()]);
    const claimed = await repository.updateJob(job(), transitions.claim(job(), 'msg-1', NOW + 90_000));
    const failed = await repository.updateJob(
      claimed,
      transitions.fail(claimed, { code: 'DOCGEN_BAD_REQUEST', message: 'refused' }),
    );
    expect(failed).not.toHaveProperty('leaseOwner');
    expect(String(table.inputs('Update')[1]?.UpdateExpression)).toMatch(/ REMOVE /);
    const item = table.items.get('job#d-1-job');
    expect(item).toMatchObject({
      status: 'failed',
      error: { code: 'DOCGEN_BAD_REQUEST' },
      ttl: NOW / 1000 + 30 * DAY_S,
    });
    expect(item).not.toHaveProperty('openPk');
    expect(item).not.toHaveProperty('leaseUntil');
    expect(item).not.toHaveProperty('leaseOwner');
  });

  it('throws JobConflictError when the job was written since it was read', async () => {
    const { repository } = setup();
    await repository.ensureJobs([job()]);
    await repository.updateJob(job(), transitions.claim(job(), 'msg-1', NOW + 1));
    const error = await repository
      .updateJob(job(), transitions.claim(job(), 'msg-2', NOW + 1))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobConflictError);
  });

  it('fails retryably when the update cannot be written', async () => {
    const { table, repository } = setup();
    await repository.ensureJobs([job()]);
    table.failNext('Update', new Error('throttled'));
    await expect(repository.updateJob(job(), { attempts: 1 })).rejects.toEqual(storeError('update a job'));
    table.failNext('Get', new Error('throttled'));
    await expect(repository.getJob('d-1-job')).rejects.toEqual(storeError('read a job'));
  });
});

describe('DynamoJobRepository.renewLease', () => {
  it('extends the lease its owner holds without touching the version', async () => {
    const { table, repository } = setup();
    await repository.ensureJobs([job()]);
    await repository.updateJob(job(), transitions.claim(job(), 'msg-1', NOW + 1_000));
    await expect(repository.renewLease('d-1-job', 'msg-1', NOW + 5_000)).resolves.toBe(true);
    expect(table.items.get('job#d-1-job')).toMatchObject({ leaseUntil: NOW + 5_000, version: 1 });
  });

  it('is false for another owner and for a final job', async () => {
    const { repository } = setup();
    await repository.ensureJobs([job()]);
    const claimed = await repository.updateJob(job(), transitions.claim(job(), 'msg-1', NOW + 1_000));
    await expect(repository.renewLease('d-1-job', 'msg-2', NOW + 5_000)).resolves.toBe(false);
    await repository.updateJob(claimed, {
      ...transitions.fail(claimed, { code: 'X', message: 'x' }),
      leaseOwner: 'msg-1',
    });
    await expect(repository.renewLease('d-1-job', 'msg-1', NOW + 5_000)).resolves.toBe(false);
  });

  it('fails retryably when the table fails', async () => {
    const { table, repository } = setup();
    table.failNext('Update', new Error('throttled'));
    await expect(repository.renewLease('d-1-job', 'msg-1', NOW)).rejects.toEqual(storeError('renew a lease'));
  });
});

describe('DynamoJobRepository.listStranded', () => {
  it('queries every shard and the legacy partition of the keys-only index, then reads each item whole', async () => {
    const { table, repository, advance } = setup({ enqueueGraceMs: 1_000 });
    await repository.createDelivery(delivery('d-1'), []);
    await repository.ensureJobs(Array.from({ length: 8 }, (_, i) => job(`job-${i}`)));
    // An item written before sharding sits in the single `open` partition.
    table.items.set('job#legacy', {
      ...job('legacy'),
      pk: 'job#legacy',
      kind: 'job',
      openPk: 'open',
      leaseUntil: NOW - 1,
    });
    advance(60 * 60_000);
    const stranded = await repository.listStranded(NOW + 60 * 60_000);
    expect(stranded.deliveries).toEqual([delivery('d-1')]);
    expect(stranded.jobs.map((j) => j.jobId).sort()).toEqual(
      ['legacy', ...Array.from({ length: 8 }, (_, i) => `job-${i}`)].sort(),
    );
    expect(stranded.jobs.every((j) => !('pk' in j) && !('openPk' in j))).toBe(true);
    const partitions = table
      .inputs('Query')
      .map((q) => (q.ExpressionAttributeValues as Record<string, unknown>)[':open']);
    expect(partitions).toEqual([
      ...Array.from({ length: JOB_TABLE.openShards }, (_, i) => `open#${i}`),
      'open',
    ]);
    expect(table.inputs('Query').every((q) => q.IndexName === OPEN_JOBS_INDEX)).toBe(true);
  });

  it('leaves out items whose lease has not run out', async () => {
    const { repository } = setup();
    await repository.ensureJobs([job()]);
    await expect(repository.listStranded(NOW)).resolves.toEqual({ deliveries: [], jobs: [] });
  });

  it('pages through a shard and stops at the limit', async () => {
    const { table, repository } = setup();
    table.pageSize = 2;
    await repository.ensureJobs(Array.from({ length: 20 }, (_, i) => job(`job-${i}`)));
    const stranded = await repository.listStranded(NOW + 60 * 60_000, 7);
    expect(stranded.jobs).toHaveLength(7);
    const paged = table.inputs('Query').filter((q) => q.ExclusiveStartKey !== undefined);
    expect(paged.length).toBeGreaterThan(0);
    expect(table.inputs('Query').every((q) => Number(q.Limit) <= 7)).toBe(true);
  });

  it('leaves out an item that closed between the index query and the read', async () => {
    const { table, repository } = setup();
    await repository.ensureJobs([job()]);
    table.afterQuery = () => {
      const item = table.items.get('job#d-1-job');
      if (item !== undefined) delete item.openPk;
    };
    await expect(repository.listStranded(NOW + 60 * 60_000)).resolves.toEqual({ deliveries: [], jobs: [] });
  });

  it('fails retryably when the index or an item cannot be read', async () => {
    const { table, repository } = setup();
    table.failNext('Query', new Error('throttled'));
    await expect(repository.listStranded(NOW)).rejects.toEqual(storeError('list open jobs'));
    await repository.ensureJobs([job()]);
    table.failNext('Get', new Error('throttled'));
    await expect(repository.listStranded(NOW + 60 * 60_000)).rejects.toEqual(storeError('read an open item'));
  });
});

describe("scanFailedJobs (the local stack's start-up scan)", () => {
  async function withFailed(count: number) {
    const context = setup();
    await context.repository.createDelivery(delivery(), []);
    for (let i = 0; i < count + 2; i += 1) {
      const queued = job(`job-${String(i).padStart(2, '0')}`);
      await context.repository.ensureJobs([queued]);
      if (i < count)
        await context.repository.updateJob(queued, transitions.fail(queued, { code: 'X', message: 'x' }));
    }
    return context;
  }

  it('scans the whole table page by page for failed jobs', async () => {
    const { table } = await withFailed(5);
    table.pageSize = 3;
    const failed = await scanFailedJobs({ dynamodb: table.client, tableName: 'jobs-table' });
    expect(failed.map((j: JobRecord) => j.jobId)).toEqual(['job-00', 'job-01', 'job-02', 'job-03', 'job-04']);
    expect(failed.every((j: JobRecord) => j.status === 'failed' && !('ttl' in j))).toBe(true);
    expect(table.inputs('Scan').length).toBeGreaterThan(1);
  });

  it('stops at the limit', async () => {
    const { table } = await withFailed(5);
    await expect(
      scanFailedJobs({ dynamodb: table.client, tableName: 'jobs-table' }, 2),
    ).resolves.toHaveLength(2);
  });

  it('fails retryably when the scan fails', async () => {
    const { table } = setup();
    table.failNext('Scan', new Error('throttled'));
    await expect(scanFailedJobs({ dynamodb: table.client, tableName: 'jobs-table' })).rejects.toEqual(
      storeError('list failed jobs'),
    );
  });
});

describe('DynamoJobRepository.listJobs on the sharded jobs-by-time index', () => {
  const dayJob = (i: number, status: JobRecord['status'] = 'queued'): JobRecord => ({
    ...newJobRecord('notes', `d-${i}`, new Date(NOW - (i + 1) * 60_000).toISOString(), NOW, {
      jobId: `job-${String(i).padStart(3, '0')}`,
      rule: 'invoice',
      templateId: '9001',
    }),
    status,
  });

  it("writes each job to one of its day's shards, spread over all of them", async () => {
    const { table, repository } = setup();
    await repository.ensureJobs(Array.from({ length: 40 }, (_, i) => dayJob(i)));
    const partitions = new Set([...table.items.values()].map((item) => item.listPk));
    expect(partitions).toEqual(
      new Set(Array.from({ length: JOB_TABLE.listShards }, (_, i) => `jobs#2026-03-01#${i}`)),
    );
  });

  it("still lists jobs written before sharding (the day's unsharded partition), merged newest first, and takes their cursors", async () => {
    const { table, repository } = setup();
    await repository.ensureJobs([dayJob(0), dayJob(2)]);
    const legacy = dayJob(1);
    table.items.set('job#job-001', {
      ...legacy,
      pk: 'job#job-001',
      kind: 'job',
      listPk: 'jobs#2026-03-01',
      listSk: `${legacy.receivedAt}#${legacy.jobId}`,
    });
    const { jobs } = await repository.listJobs({});
    expect(jobs.map((j) => j.jobId)).toEqual(['job-000', 'job-001', 'job-002']);
    const oldCursor = Buffer.from(
      JSON.stringify({
        d: '2026-03-01',
        k: { pk: 'job#job-000', listPk: 'jobs#2026-03-01', listSk: `${dayJob(0).receivedAt}#job-000` },
      }),
    ).toString('base64url');
    const after = await repository.listJobs({ cursor: oldCursor });
    expect(after.jobs.map((j) => j.jobId)).toEqual(['job-001', 'job-002']);
  });

  it('goes on from where a shard stopped when a sparse filter spends the query budget, listing each job once', async () => {
    const { table, repository } = setup();
    const jobs = Array.from({ length: 240 }, (_, i) => dayJob(i, i % 100 === 7 ? 'failed' : 'queued'));
    await repository.ensureJobs(jobs);
    table.pageSize = 1;
    const found: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await repository.listJobs({ status: 'failed', limit: 2, ...(cursor ? { cursor } : {}) });
      found.push(...page.jobs.map((j) => j.jobId));
      cursor = page.cursor;
      pages += 1;
    } while (cursor !== undefined && pages < 50);
    expect(found).toEqual(['job-007', 'job-107', 'job-207']);
    expect(pages).toBeGreaterThan(2);
  });
});
