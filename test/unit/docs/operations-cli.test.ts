/**
 * docs/operations-cli.md says what `jobs list` and `tail` do on AWS and which permissions they need: the
 * DynamoDB calls the job table's listing really makes must be the ones the page names.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoJobRepository } from '../../../functions/adapters/dynamodb/job-table';

const root = join(__dirname, '../../..');
const page = readFileSync(join(root, 'docs/operations-cli.md'), 'utf8');

/** The IAM action of each DynamoDB document-client command. */
const ACTIONS: Record<string, string> = {
  QueryCommand: 'dynamodb:Query',
  ScanCommand: 'dynamodb:Scan',
  GetCommand: 'dynamodb:GetItem',
  BatchGetCommand: 'dynamodb:BatchGetItem',
};

/** The IAM actions (with the index, if any) the listing sends, against a table answering one job. */
async function callsOfListing(query: { deliveryId?: string }): Promise<string[]> {
  const calls = new Set<string>();
  const ddb = {
    send: async (command: { constructor: { name: string }; input: { IndexName?: string } }) => {
      const action = ACTIONS[command.constructor.name] ?? command.constructor.name;
      calls.add(command.input.IndexName === undefined ? action : `${action} ${command.input.IndexName}`);
      return action === 'dynamodb:GetItem' ? {} : { Items: [{ pk: 'job#j1' }] };
    },
  } as unknown as DynamoDBDocumentClient;
  await new DynamoJobRepository(ddb, 'jobs-table').listJobs({ limit: 5, ...query });
  return [...calls].sort();
}

/** The row of the permissions table for these commands. */
const permissionRow = (commands: string): string | undefined =>
  page.split('\n').find((line) => line.trimStart().startsWith(`| ${commands} `));

describe('docs/operations-cli.md on jobs list and tail', () => {
  it.each([[{}], [{ deliveryId: 'd-1' }]])(
    'names every DynamoDB call the listing makes (%j) among their permissions',
    async (query) => {
      const row = permissionRow('`jobs list`, `tail`');
      expect(row).toBeDefined();
      const calls = await callsOfListing(query);
      expect(calls).toEqual(
        expect.arrayContaining(['dynamodb:GetItem', expect.stringMatching(/^dynamodb:Query \S+$/)]),
      );
      for (const call of calls) {
        const [action, index] = call.split(' ');
        expect(row).toContain(`\`${action}\``);
        if (index !== undefined) expect(row).toContain(`\`${index}\``);
      }
    },
  );

  it('says the listing queries the index, not that it scans the table', () => {
    const section = page.slice(
      page.indexOf('## `docrelay jobs list'),
      page.indexOf('## `docrelay jobs download'),
    );
    expect(section).toContain('`jobs-by-time` index');
    expect(page).not.toMatch(/\bscan/i);
  });
});
