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

describe('failures that someone sees', () => {
  const { stack, template } = synthStack();
  const relay = stack.docRelay;
  const id = (construct: { node: { defaultChild?: unknown } }) => logicalId(stack, construct);
  const alarms = () =>
    Object.values(template.findResources('AWS::CloudWatch::Alarm')).map(
      (alarm) => alarm.Properties as Record<string, unknown>,
    );

  test('every alarm notifies the topic on alarm and on recovery', () => {
    const topic = { Ref: id(relay.monitoring.alarmTopic as never) };
    expect(alarms().length).toBe(relay.monitoring.alarms.length);
    for (const alarm of alarms()) {
      expect([alarm.AlarmActions, alarm.OKActions]).toEqual([[topic], [topic]]);
    }
  });

  test('reconciler errors alarm, and a failed reconciler run lands in its failure queue', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: id(relay.reconcilerFunction) } }],
      Threshold: 1,
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: id(relay.reconcilerFunction) },
      MaximumRetryAttempts: 0,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [id(relay.reconcilerFailureQueue), 'Arn'] } },
      },
    });
  });

  test('every new arrival in the jobs dead-letter queue alarms: metric math on the depth’s increase', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: 'DIFF(FILL(depth, 0))', ReturnData: true }),
        Match.objectLike({
          Id: 'depth',
          ReturnData: false,
          MetricStat: Match.objectLike({
            Metric: Match.objectLike({
              MetricName: 'ApproximateNumberOfMessagesVisible',
              Dimensions: [
                { Name: 'QueueName', Value: { 'Fn::GetAtt': [id(relay.deadLetterQueue), 'QueueName'] } },
              ],
            }),
          }),
        }),
      ]),
    });
  });

  test('worker throttles and table throttling alarm', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Throttles',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: id(relay.workerFunction) } }],
    });
    const tableDimension = [{ Name: 'TableName', Value: { Ref: id(relay.table) } }];
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: 'FILL(reads, 0) + FILL(writes, 0)' }),
        Match.objectLike({
          MetricStat: Match.objectLike({
            Metric: {
              MetricName: 'ReadThrottleEvents',
              Namespace: 'AWS/DynamoDB',
              Dimensions: tableDimension,
            },
          }),
        }),
        Match.objectLike({
          MetricStat: Match.objectLike({
            Metric: {
              MetricName: 'WriteThrottleEvents',
              Namespace: 'AWS/DynamoDB',
              Dimensions: tableDimension,
            },
          }),
        }),
      ]),
    });
  });

  test('the dashboard shows the event-ingest function and its deliveries', () => {
    const body = JSON.stringify(
      Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0]?.Properties.DashboardBody,
    );
    expect(body).toContain('event-ingest');
    expect(body).toContain(id(relay.eventIngestFunction!));
  });
});
