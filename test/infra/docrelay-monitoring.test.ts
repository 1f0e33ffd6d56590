/** Alarms that reach people: the topic lets CloudWatch publish, every alarm has an action, failures are seen. */
import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Key } from 'aws-cdk-lib/aws-kms';
import { DocRelay } from '../../lib/docrelay';
import { fixtureConfig, logicalId, synthStack, testApp } from './support';

const fromOwnAlarms = {
  StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
  ArnLike: {
    'aws:SourceArn': {
      'Fn::Join': ['', Match.arrayWith([Match.stringLikeRegexp(':cloudwatch:'), ':alarm:*'])],
    },
  },
};

describe('the alarm topic', () => {
  test('its policy allows CloudWatch to publish, from this account’s alarms only, beside the TLS-only deny', () => {
    const { stack, template } = synthStack();
    const topic = logicalId(stack, stack.docRelay.monitoring.alarmTopic as never);
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: topic }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          {
            Sid: 'AllowCloudWatchAlarms',
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: 'sns:Publish',
            Resource: { Ref: topic },
            Condition: fromOwnAlarms,
          },
        ]),
      },
    });
  });

  test('a customer managed key lets CloudWatch encrypt for the topic, under the same conditions', () => {
    const stack = new Stack(testApp(), 'Keyed');
    const key = new Key(stack, 'Key', { enableKeyRotation: true });
    new DocRelay(stack, 'Relay', { config: fixtureConfig(), encryptionKey: key });
    Template.fromStack(stack).hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: {
        Statement: Match.arrayWith([
          {
            Sid: 'AllowCloudWatchAlarmsToUseTheKey',
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
            Resource: '*',
            Condition: fromOwnAlarms,
          },
        ]),
      },
    });
  });
});
