/**
 * The service estimates in the job table: one item per service, keyed `service#<origin>`, beside the jobs
 * (it is in no index and no job listing: `kind` is `service`). Each age is written conditionally, so
 * concurrent workers only ever lower the refused age and raise the served one.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { LinkAges, ServiceEstimates } from '../../ports/service-estimates';
import { JobStoreError } from './errors';

const serviceKey = (service: string): string => `service#${service}`;

const FIELDS = { refused: 'linkRefusedAtMs', served: 'linkServedAtMs' } as const;

/** Link ages per service, in the job table. */
export class DynamoServiceEstimates implements ServiceEstimates {
  constructor(
    private readonly ddb: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async linkAges(service: string): Promise<LinkAges | undefined> {
    let item: Record<string, unknown> | undefined;
    try {
      item = (
        await this.ddb.send(new GetCommand({ TableName: this.tableName, Key: { pk: serviceKey(service) } }))
      ).Item;
    } catch (error) {
      throw new JobStoreError('read the service estimates', error);
    }
    if (item === undefined) return undefined;
    const refused = item[FIELDS.refused];
    const served = item[FIELDS.served];
    return {
      ...(typeof refused === 'number' ? { refusedAtMs: refused } : {}),
      ...(typeof served === 'number' ? { servedAtMs: served } : {}),
    };
  }

  async recordLinkAge(service: string, kind: 'refused' | 'served', ageMs: number): Promise<void> {
    try {
      await this.ddb.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: serviceKey(service) },
          UpdateExpression: 'SET #age = :age, #kind = :kind, updatedAt = :at',
          ConditionExpression: `attribute_not_exists(#age) OR #age ${kind === 'refused' ? '>' : '<'} :age`,
          ExpressionAttributeNames: { '#age': FIELDS[kind], '#kind': 'kind' },
          ExpressionAttributeValues: {
            ':age': Math.round(ageMs),
            ':kind': 'service',
            ':at': new Date().toISOString(),
          },
        }),
      );
    } catch (error) {
      // Another worker recorded an age that says more: nothing to do.
      if (error instanceof ConditionalCheckFailedException) return;
      throw new JobStoreError('record a service estimate', error);
    }
  }
}
