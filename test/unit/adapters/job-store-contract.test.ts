/** The job store contract (test/helpers/job-store-contract.ts) on the in-memory repository and on the fake table. */
import { DynamoJobRepository } from '../../../functions/adapters/dynamodb/job-table';
import { InMemoryJobRepository } from '../../../functions/adapters/memory/job-repository';
import { CONTRACT_RETENTION_DAYS, describeJobStoreContract } from '../../helpers/job-store-contract';
import { FakeJobTable } from './dynamodb/fake-document-client';

describeJobStoreContract('in-memory repository', async ({ now }) => ({
  repository: new InMemoryJobRepository({ now }),
  advance: () => undefined,
}));

describeJobStoreContract('DynamoDB adapter over the fake table', async ({ now }) => ({
  repository: new DynamoJobRepository(new FakeJobTable().client, 'jobs-table', {
    now,
    retentionDays: CONTRACT_RETENTION_DAYS,
  }),
  advance: () => undefined,
}));

describeJobStoreContract('DynamoDB adapter over the fake table, pages of 2 items', async ({ now }) => {
  const table = new FakeJobTable();
  table.pageSize = 2;
  return {
    repository: new DynamoJobRepository(table.client, 'jobs-table', {
      now,
      retentionDays: CONTRACT_RETENTION_DAYS,
    }),
    advance: () => undefined,
  };
});
