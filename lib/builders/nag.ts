/**
 * cdk-nag acknowledgments, each on the narrowest construct. Findings that name a resource carry it flattened
 * the way cdk-nag writes it (`<Logical.Arn>/prefix/*`); that flattening is re-done here from the public
 * CloudFormation shapes, so nothing imports cdk-nag's internals.
 */
import { Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** A CloudFormation value (a string or an intrinsic) as the flat string cdk-nag uses in a finding id. */
export function flattenReference(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
  if (typeof node !== 'object' || node === null) return JSON.stringify(node);
  const value = node as Record<string, unknown>;
  if (Array.isArray(value['Fn::Join'])) {
    const [delimiter, items] = value['Fn::Join'] as [string, unknown[]];
    return items.map(flattenReference).join(delimiter);
  }
  if (value['Fn::Sub'] !== undefined) return flattenReference(value['Fn::Sub']);
  if (Array.isArray(value['Fn::GetAtt'])) {
    const [resource, attribute] = value['Fn::GetAtt'] as [unknown, unknown];
    return `<${flattenReference(resource)}.${flattenReference(attribute)}>`;
  }
  if (value['Fn::ImportValue'] !== undefined) return flattenReference(value['Fn::ImportValue']);
  if (value.Ref !== undefined) return `<${flattenReference(value.Ref)}>`;
  return JSON.stringify(node);
}

/** Acknowledges one cdk-nag rule on `construct` (and what is under it), with the reason a reviewer reads. */
export function acknowledge(construct: IConstruct, id: string, reason: string): void {
  Validations.of(construct).acknowledge({ id, reason });
}

/** Acknowledges AwsSolutions-IAM5 for exactly one wildcard resource (given as the token the policy holds). */
export function acknowledgeWildcardResource(construct: IConstruct, resource: string, reason: string): void {
  const flat = flattenReference(Stack.of(construct).resolve(resource));
  acknowledge(construct, `AwsSolutions-IAM5[Resource::${flat}]`, reason);
}
