/** Data protection: the table is deletion-protected, and the removal policy reaches queues and log groups. */
import { RemovalPolicy } from 'aws-cdk-lib';
import { synthStack } from '../support';

const policies = (template: ReturnType<typeof synthStack>['template'], type: string) =>
  Object.values(template.findResources(type)).map((resource) => resource.DeletionPolicy);

describe('data protection', () => {
  test('the job table is deletion-protected by default, and can be opted out', () => {
    synthStack().template.hasResourceProperties('AWS::DynamoDB::Table', { DeletionProtectionEnabled: true });
    synthStack({ deletionProtection: false }).template.hasResourceProperties('AWS::DynamoDB::Table', {
      DeletionProtectionEnabled: false,
    });
  });

  test('queues and log groups are retained by default, like the table', () => {
    const { template } = synthStack();
    const queues = policies(template, 'AWS::SQS::Queue');
    expect(queues.length).toBeGreaterThanOrEqual(3);
    expect(new Set(queues)).toEqual(new Set(['Retain']));
    const logGroups = policies(template, 'AWS::Logs::LogGroup');
    expect(logGroups).toHaveLength(6);
    expect(new Set(logGroups)).toEqual(new Set(['Retain']));
  });

  test('removalPolicy DESTROY reaches the queues and every log group', () => {
    const { template } = synthStack({ removalPolicy: RemovalPolicy.DESTROY });
    expect(new Set(policies(template, 'AWS::SQS::Queue'))).toEqual(new Set(['Delete']));
    expect(new Set(policies(template, 'AWS::Logs::LogGroup'))).toEqual(new Set(['Delete']));
  });
});
