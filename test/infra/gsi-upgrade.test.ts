/**
 * Upgrades that apply: DynamoDB creates or deletes one GSI per stack update and cannot change an index in
 * place, so the job table may differ from the released template's (fixtures/released-table.json) in one GSI
 * at most; a larger change goes out in two deploys with `omitTableIndexes` (docs/upgrade.md).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { JOB_TABLE } from '../../functions/config/table-contract';
import { gsiChanges, type TableDefinition } from './gsi-changes';
import { logicalId, synthStack } from './support';

const released = JSON.parse(
  readFileSync(join(__dirname, 'fixtures', 'released-table.json'), 'utf8'),
) as TableDefinition;

/** The job table of a synthesized stack with the given props. */
function synthesizedTable(props: Parameters<typeof synthStack>[0] = {}): TableDefinition {
  const tables = Object.values(synthStack(props).template.findResources('AWS::DynamoDB::Table'));
  expect(tables).toHaveLength(1);
  return tables[0]!.Properties as TableDefinition;
}

const withoutIndexes = (table: TableDefinition, names: string[]): TableDefinition => ({
  ...table,
  GlobalSecondaryIndexes: (table.GlobalSecondaryIndexes ?? []).filter((i) => !names.includes(i.IndexName)),
});

describe('the job table against the released template', () => {
  const current = synthesizedTable();

  test('the table keeps its key schema (a change would replace the table)', () => {
    expect(current.KeySchema).toEqual(released.KeySchema);
  });

  test('this template adds, removes or changes at most one GSI of the released table', () => {
    expect(released.GlobalSecondaryIndexes?.length).toBeGreaterThan(0);
    expect(gsiChanges(released, current).length).toBeLessThanOrEqual(1);
  });
});

describe('gsiChanges', () => {
  test('names every index added, removed or changed (key, key type or projection)', () => {
    const changedProjection: TableDefinition = {
      ...released,
      GlobalSecondaryIndexes: (released.GlobalSecondaryIndexes ?? []).map((index) =>
        index.IndexName === JOB_TABLE.byDeliveryIndex
          ? { ...index, Projection: { ProjectionType: 'ALL' } }
          : index,
      ),
    };
    expect(gsiChanges(released, changedProjection)).toEqual([`changed ${JOB_TABLE.byDeliveryIndex}`]);
    const changedKeyType: TableDefinition = {
      ...released,
      AttributeDefinitions: released.AttributeDefinitions.map((a) =>
        a.AttributeName === JOB_TABLE.openSortKey ? { ...a, AttributeType: 'S' } : a,
      ),
    };
    expect(gsiChanges(released, changedKeyType)).toEqual([`changed ${JOB_TABLE.openJobsIndex}`]);
    const older = withoutIndexes(released, [JOB_TABLE.jobsByTimeIndex, JOB_TABLE.byDeliveryIndex]);
    expect(gsiChanges(older, released)).toEqual([
      `added ${JOB_TABLE.jobsByTimeIndex}`,
      `added ${JOB_TABLE.byDeliveryIndex}`,
    ]);
    expect(gsiChanges(released, older)).toEqual([
      `removed ${JOB_TABLE.jobsByTimeIndex}`,
      `removed ${JOB_TABLE.byDeliveryIndex}`,
    ]);
  });
});

describe('omitTableIndexes: an upgrade of two indexes in two deploys', () => {
  // A release before the listing indexes: upgrading from it adds two GSIs, which one update cannot do.
  const older = withoutIndexes(released, [JOB_TABLE.jobsByTimeIndex, JOB_TABLE.byDeliveryIndex]);

  test('the first deploy leaves one of the two out, the second adds it: one GSI each', () => {
    const first = synthesizedTable({ omitTableIndexes: [JOB_TABLE.byDeliveryIndex] });
    expect(gsiChanges(older, first)).toEqual([`added ${JOB_TABLE.jobsByTimeIndex}`]);
    expect(gsiChanges(first, synthesizedTable())).toEqual([`added ${JOB_TABLE.byDeliveryIndex}`]);
  });

  test('an index left out is left out of the table and of the index-throttle alarm', () => {
    const { stack, template } = synthStack({ omitTableIndexes: [JOB_TABLE.jobsByTimeIndex] });
    const [table] = Object.values(template.findResources('AWS::DynamoDB::Table'));
    expect((table!.Properties as TableDefinition).GlobalSecondaryIndexes?.map((i) => i.IndexName)).toEqual([
      JOB_TABLE.openJobsIndex,
      JOB_TABLE.byDeliveryIndex,
    ]);
    // The index-throttle alarm reads only the indexes that exist.
    const alarmId = logicalId(stack, stack.docRelay.monitoring.indexThrottlesAlarm!);
    const alarm = JSON.stringify(template.toJSON().Resources[alarmId]);
    expect(alarm).toContain(JOB_TABLE.byDeliveryIndex);
    expect(alarm).not.toContain(JOB_TABLE.jobsByTimeIndex);
  });

  test('a name that is no index of the table fails synth, naming the indexes', () => {
    expect(() => synthStack({ omitTableIndexes: ['jobs-by-tim' as never] })).toThrow(
      /omitTableIndexes names "jobs-by-tim", not an index of the job table \(open-jobs, jobs-by-time, by-delivery\)/,
    );
  });
});
