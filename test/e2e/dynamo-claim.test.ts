/**
 * The worker's one-write calls on a real DynamoDB API (dynalite, through the AWS SDK as the worker sends them):
 * the claim's condition (statuses, attempts, leases) and arithmetic, and the close that returns the delivery.
 * The unit tests check the same against a fake client; this checks that DynamoDB's expression language
 * agrees with what the fake assumes.
 */
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoJobRepository } from '../../functions/adapters/dynamodb/job-table';
import { type DeliveryRecord, type JobRecord, newJobRecords, transitions } from '../../functions/core/job';
import type { JobClaim } from '../../functions/ports/job-repository';
import { type LocalDynamo, startDynalite } from './helpers/dynalite';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
let dynamo: LocalDynamo;
let tables = 0;

beforeAll(async () => {
  dynamo = await startDynalite();
});

afterAll(async () => {
  await dynamo?.close();
});

/** A repository on a table of its own, holding one delivery with two jobs. */
async function setup(recordJobs = true): Promise<{
  repository: DynamoJobRepository;
  delivery: DeliveryRecord;
  jobs: JobRecord[];
}> {
  tables += 1;
  const name = `claim-${tables}`;
  await dynamo.createTable(name);
  const repository = new DynamoJobRepository(DynamoDBDocumentClient.from(dynamo.client), name, {
    now: () => NOW,
  });
  const delivery: DeliveryRecord = {
    integration: 'notes',
    deliveryId: 'd-1',
    receivedAt: new Date(NOW).toISOString(),
    jobs: [
      { jobId: 'job-a', rule: 'invoice', templateId: '9001' },
      { jobId: 'job-b', rule: 'receipt', templateId: '9002' },
    ],
    sealedPayload: 'sealed-payload',
  };
  const jobs = newJobRecords(delivery, NOW);
  expect(await repository.createDelivery(delivery, recordJobs ? jobs : [])).toMatchObject({ created: true });
  return { repository, delivery, jobs };
}

const claim = (overrides: Partial<JobClaim> = {}): JobClaim => ({
  jobId: 'job-a',
  owner: 'm-1',
  leaseUntil: NOW + 60_000,
  nowMs: NOW,
  maxAttempts: 3,
  ...overrides,
});

describe('the one-write claim on dynalite', () => {
  it('claims a queued job as the claim transition would, and returns it as written', async () => {
    const { repository, jobs } = await setup();
    const [queued] = jobs as [JobRecord];
    const claimed = await repository.claimJob(claim());
    expect(claimed).toEqual({
      ...queued,
      ...transitions.claim(queued, 'm-1', NOW + 60_000),
      version: 1,
      updatedAt: new Date(NOW).toISOString(),
    });
    expect(await repository.getJob('job-a')).toEqual(claimed);
  });

  it('refuses a lease another holds until it runs out, then takes it over; the holder may claim again', async () => {
    const { repository } = await setup();
    await repository.claimJob(claim({ owner: 'm-holder' }));
    await expect(repository.claimJob(claim({ owner: 'm-2' }))).resolves.toBeUndefined();
    await expect(repository.claimJob(claim({ owner: 'm-holder' }))).resolves.toMatchObject({ attempts: 2 });
    await expect(repository.claimJob(claim({ owner: 'm-2', nowMs: NOW + 60_000 }))).resolves.toMatchObject({
      leaseOwner: 'm-2',
      attempts: 3,
      version: 3,
    });
  });

  it('refuses a job out of attempts, checkpointed, final or missing, and writes nothing', async () => {
    const { repository } = await setup();
    const claimed = (await repository.claimJob(claim())) as JobRecord;
    await expect(
      repository.claimJob(claim({ maxAttempts: 1, nowMs: NOW + 60_000 })),
    ).resolves.toBeUndefined();
    const created = await repository.updateJob(claimed, { status: 'created' });
    await expect(repository.claimJob(claim({ nowMs: NOW + 60_000 }))).resolves.toBeUndefined();
    await repository.updateJob(created, { status: 'stored', leaseOwner: undefined, leaseUntil: undefined });
    await expect(repository.claimJob(claim({ nowMs: NOW + 60_000 }))).resolves.toBeUndefined();
    await expect(repository.getJob('job-a')).resolves.toMatchObject({ status: 'stored', version: 3 });
    await expect(repository.claimJob(claim({ jobId: 'no-such-job' }))).resolves.toBeUndefined();
    await expect(repository.getJob('no-such-job')).resolves.toBeUndefined();
  });
});

describe('closing a delivery on dynalite', () => {
  it('records it closed with all its jobs; without them, closes it once; then, or after a failed send, returns nothing', async () => {
    const closed = await setup();
    await expect(closed.repository.closeDelivery('notes', 'd-1', 'x')).resolves.toBeUndefined();
    await expect(closed.repository.getJob('job-b')).resolves.not.toHaveProperty('closesDelivery');
    const { repository, delivery } = await setup(false);
    await expect(repository.closeDelivery('notes', 'd-1', '2026-03-01T12:00:02.000Z')).resolves.toEqual({
      ...delivery,
      enqueuedAt: '2026-03-01T12:00:02.000Z',
    });
    await expect(
      repository.closeDelivery('notes', 'd-1', '2026-03-01T12:00:03.000Z'),
    ).resolves.toBeUndefined();
    const other = await setup(false);
    await other.repository.markDeliverySendFailed('notes', 'd-1', '2026-03-01T12:00:01.000Z');
    await expect(other.repository.closeDelivery('notes', 'd-1', 'x')).resolves.toBeUndefined();
    await expect(other.repository.getDelivery('notes', 'd-1')).resolves.not.toHaveProperty('enqueuedAt');
  });
});
