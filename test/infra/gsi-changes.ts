/**
 * What a stack update does to a DynamoDB table's GSIs, compared by name: indexes added, removed and changed
 * (key schema, key attribute types or projection). CloudFormation applies one GSI creation or deletion per
 * table update and cannot change an index in place, so an upgrade may differ from the deployed table in one.
 */

/** The part of an AWS::DynamoDB::Table's properties the comparison reads. */
export interface TableDefinition {
  readonly KeySchema: ReadonlyArray<{ AttributeName: string; KeyType: string }>;
  readonly AttributeDefinitions: ReadonlyArray<{ AttributeName: string; AttributeType: string }>;
  readonly GlobalSecondaryIndexes?: ReadonlyArray<{
    IndexName: string;
    KeySchema: ReadonlyArray<{ AttributeName: string; KeyType: string }>;
    Projection: unknown;
  }>;
}

/** The GSI changes from `released` to `next`, each as `added <name>`, `removed <name>` or `changed <name>`. */
export function gsiChanges(released: TableDefinition, next: TableDefinition): string[] {
  const shape = (table: TableDefinition) => {
    const types = new Map(table.AttributeDefinitions.map((a) => [a.AttributeName, a.AttributeType]));
    return new Map(
      (table.GlobalSecondaryIndexes ?? []).map((index) => [
        index.IndexName,
        JSON.stringify({
          keys: index.KeySchema.map((key) => [key.AttributeName, key.KeyType, types.get(key.AttributeName)]),
          // As written: CloudFormation sees any difference, even the order of NonKeyAttributes, as a change.
          projection: index.Projection,
        }),
      ]),
    );
  };
  const before = shape(released);
  const after = shape(next);
  const changes: string[] = [];
  for (const name of before.keys()) if (!after.has(name)) changes.push(`removed ${name}`);
  for (const [name, definition] of after) {
    if (!before.has(name)) changes.push(`added ${name}`);
    else if (before.get(name) !== definition) changes.push(`changed ${name}`);
  }
  return changes;
}
