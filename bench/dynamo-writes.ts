/**
 * DynamoDB write units per stored job, table and indexes: a stored job's writes (the ingest's puts of a delivery
 * of the given shape; per job the worker's claim and the write that stores it) run through the job store on
 * dynalite with the deployed table's indexes. Neither dynalite nor moto reports index units, so each write is
 * priced from the items before and after it, by DynamoDB's rules: the table ceil(max(old, new) / 1 KB); an
 * index 1 unit per KB of its projected entry put or deleted (2 entries when its key changes), none when no
 * projected attribute changes.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type AttributeValue,
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  GetItemCommand,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import { DynamoJobRepository } from '../functions/adapters/dynamodb/job-table';
import {
  applyChanges,
  type DeliveryRecord,
  type JobRecord,
  newJobRecords,
  transitions,
} from '../functions/core/job';
import { JobCheckpoint } from '../functions/core/job-checkpoint';
import { keptLeaseRange } from '../functions/core/lease';
import type { Worker } from '../functions/core/worker-deps';
import { TABLE_DEFINITION } from '../local/stack/aws-emulators';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../local/state-files';

type Wire = Record<string, AttributeValue>;
// dynalite's DynamoDB item size: attribute names plus values, as DynamoDB bills them.
const { itemSize } = require('dynalite/db') as { itemSize: (item: Wire) => number };

const units = (item: Wire | undefined): number => (item === undefined ? 0 : Math.ceil(itemSize(item) / 1024));

/** An index's entry for an item: its key and projected attributes, or undefined when the item is not in it. */
export function indexEntry(
  index: (typeof TABLE_DEFINITION.GlobalSecondaryIndexes)[number],
  item: Wire | undefined,
): Wire | undefined {
  if (item === undefined) return undefined;
  const keys = [...index.KeySchema.map((k) => k.AttributeName), 'pk'];
  if (index.KeySchema.some((k) => item[k.AttributeName] === undefined)) return undefined;
  const projection = index.Projection as { ProjectionType: string; NonKeyAttributes?: string[] };
  const names = [
    ...keys,
    ...(projection.ProjectionType === 'INCLUDE' ? (projection.NonKeyAttributes ?? []) : []),
  ];
  return Object.fromEntries(
    names.filter((n) => item[n] !== undefined).map((n) => [n, item[n] as AttributeValue]),
  );
}

/** Write units one item's change costs, on the table and per index (an index left alone costs none). */
export function price(
  before: Wire | undefined,
  after: Wire | undefined,
  transactional: boolean,
): Map<string, number> {
  const cost = new Map<string, number>([
    ['table', Math.max(units(before), units(after), 1) * (transactional ? 2 : 1)],
  ]);
  for (const index of TABLE_DEFINITION.GlobalSecondaryIndexes) {
    const old = indexEntry(index, before);
    const now = indexEntry(index, after);
    if (JSON.stringify(old) === JSON.stringify(now)) continue;
    const keyChanged =
      old !== undefined &&
      now !== undefined &&
      index.KeySchema.some(
        (k) => JSON.stringify(old[k.AttributeName]) !== JSON.stringify(now[k.AttributeName]),
      );
    const written =
      old === undefined || now === undefined
        ? units(old ?? now)
        : keyChanged
          ? units(old) + units(now)
          : units(now);
    cost.set(index.IndexName, written);
  }
  return cost;
}

/** Waits (bounded) until a new table and its indexes are ACTIVE: dynalite answers CreateTable before. */
async function waitActive(client: DynamoDBClient, name: string): Promise<void> {
  for (let poll = 0; poll < 500; poll += 1) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
    const indexes = (Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexStatus ?? 'ACTIVE');
    if (Table?.TableStatus === 'ACTIVE' && indexes.every((status) => status === 'ACTIVE')) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`table ${name} not ACTIVE after 500 polls`);
}

const silentLog = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** The deliveries measured: how many jobs each makes, and whether its sender's scheme needs a content key. */
export interface DeliveryShape {
  readonly jobsPerDelivery: number;
  readonly contentKey: boolean;
}

/** Write units per stored job: total, table, and each index. */
export async function measureDynamoWrites(
  shape: DeliveryShape = { jobsPerDelivery: 2, contentKey: true },
  deliveries = 20,
): Promise<{ total: number; table: number } & Record<string, number>> {
  const server = dynalite({ createTableMs: 0 }) as Server;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const client = new DynamoDBClient({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  });
  try {
    await client.send(new CreateTableCommand({ ...TABLE_DEFINITION, TableName: 'writes' }));
    await waitActive(client, 'writes');
    const totals = new Map<string, number>();
    const read = async (pk: string): Promise<Wire | undefined> =>
      (
        await client.send(
          new GetItemCommand({ TableName: 'writes', Key: { pk: { S: pk } }, ConsistentRead: true }),
        )
      ).Item;
    const documents = DynamoDBDocumentClient.from(client, {
      marshallOptions: { removeUndefinedValues: true },
    });
    const counting = {
      send: async (command: { input: Record<string, unknown>; constructor: { name: string } }) => {
        const name = command.constructor.name;
        const input = command.input;
        // The store writes no transaction (dynalite has none): every write here is priced as a plain one.
        const keys: Array<{ pk: string; transactional: boolean }> =
          name === 'PutCommand'
            ? [{ pk: String((input.Item as { pk: string }).pk), transactional: false }]
            : name === 'UpdateCommand'
              ? [{ pk: String((input.Key as { pk: string }).pk), transactional: false }]
              : name === 'BatchWriteCommand'
                ? Object.values(
                    input.RequestItems as Record<string, Array<{ PutRequest: { Item: { pk: string } } }>>,
                  )
                    .flat()
                    .map((r) => ({ pk: r.PutRequest.Item.pk, transactional: false }))
                : [];
        const before = await Promise.all(keys.map((k) => read(k.pk)));
        const result = await documents.send(command as never);
        for (const [i, key] of keys.entries()) {
          for (const [part, wru] of price(before[i], await read(key.pk), key.transactional))
            totals.set(part, (totals.get(part) ?? 0) + wru);
        }
        return result;
      },
    } as unknown as DynamoDBDocumentClient;
    let now = Date.now();
    const clock = { tick: (): number => (now += 1_000) };
    const repository = new DynamoJobRepository(counting, 'writes', { now: () => now });
    let jobsStored = 0;
    for (let d = 0; d < deliveries; d += 1) {
      const delivery: DeliveryRecord = {
        integration: 'stripe',
        // Ids as senders and docrelay make them: a Stripe event id, UUID job ids.
        deliveryId: `evt_${String(d).padStart(24, '0')}`,
        receivedAt: new Date(now).toISOString(),
        jobs: Array.from({ length: shape.jobsPerDelivery }, (_, i) => ({
          jobId: randomUUID(),
          rule: `rule-${i}`,
          templateId: '1234567',
        })),
        // An ~8 KB webhook's sealed payload: compressed and encrypted (~2.2 KB), in the seal's text form (~3 KB).
        sealedPayload: ['v2', 12, 16, 2_200]
          .map((n) => (typeof n === 'string' ? n : randomBytes(n).toString('base64url')))
          .join('.'),
      };
      const jobs = newJobRecords(delivery, now);
      const contentKey = shape.contentKey ? String(d).padStart(64, 'c') : undefined;
      const recorded = await repository.createDelivery(delivery, jobs, contentKey);
      if (!recorded.created) throw new Error('delivery not recorded');
      for (const queued of jobs) jobsStored += await storeJob(repository, queued, clock);
    }
    const perJob = Object.fromEntries([...totals].map(([part, wru]) => [part, wru / jobsStored]));
    return {
      ...perJob,
      total: [...totals.values()].reduce((a, b) => a + b, 0) / jobsStored,
      table: perJob.table ?? 0,
    };
  } finally {
    client.destroy();
    await new Promise<void>((done) => server.close(() => done()));
  }
}

/**
 * One job's writes as the worker makes them for a one-file document copied at once, under the default key
 * pattern: the claim (keeping the first-pickup lease, as processJob asks), then one write recording the
 * document, its file and `stored` (the `created` checkpoint is written on its own only when the copy is slow
 * or fails, and no key is listed before the file lands: core/job-checkpoint.ts).
 */
async function storeJob(
  repository: DynamoJobRepository,
  queued: JobRecord,
  clock: { tick: () => number },
): Promise<number> {
  // A second between steps, as a job's writes are apart.
  let now = clock.tick();
  const leaseMs = 1_800_000;
  const claimed = await repository.claimJob({
    jobId: queued.jobId,
    owner: randomUUID(),
    leaseUntil: now + leaseMs,
    nowMs: now,
    maxAttempts: 5,
    keepLeaseWithin: keptLeaseRange(now, leaseMs),
  });
  if (claimed === undefined) throw new Error('claim refused');
  if (queued.closesDelivery === true)
    await repository.closeDelivery(claimed.integration, claimed.deliveryId, new Date(now).toISOString());
  const document = {
    id: 'doc_0123456789abcdef',
    name: 'Invoice 2026-0001',
    templateId: '1234567',
    createdAt: new Date(now).toISOString(),
    linksExpireAt: new Date(now + 3_600_000).toISOString(),
    sealedLinks: 'L'.repeat(400),
  };
  const file = {
    fileId: 'file_0123456789abcdef',
    filename: 'invoice-2026-0001.pdf',
    mimeType: 'application/pdf',
    size: 48_213,
  };
  now = clock.tick();
  // The worker's own checkpoint logic (core/job-checkpoint.ts) composes the write: created, the file, stored.
  const checkpoint = new JobCheckpoint(
    { jobs: repository, log: silentLog } as unknown as Worker,
    claimed,
    transitions.created(claimed, document, [file]),
  );
  const created = checkpoint.job;
  const stored = {
    ...file,
    bucket: 'docrelay-documents-0123456789',
    key: `stripe/2026/11/29/${created.jobId}/invoice-2026-0001.pdf`,
    sha256: 'f'.repeat(64),
    storedSize: 48_213,
    storedAt: new Date(now).toISOString(),
  };
  const fileChanges = transitions.fileStored(created, stored);
  const after = applyChanges(created, fileChanges, new Date(now).toISOString());
  await checkpoint.write({ ...fileChanges, ...transitions.stored(after) });
  return 1;
}

if (require.main === module) {
  Promise.all([measureDynamoWrites(), measureDynamoWrites({ jobsPerDelivery: 1, contentKey: false })]).then(
    ([twoJobs, oneJob]) => console.log(JSON.stringify({ twoJobsContentKey: twoJobs, oneJob }, null, 2)),
    (error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
}
