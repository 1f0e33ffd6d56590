/** The DocRelay construct used from another CDK app that brings its own bucket, key, bus, topic and sealing secret. */
import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { DocRelay, type DocRelayBucketOption } from '../../lib/docrelay';
import { fixtureConfig, logicalId, roleActions, roleGrants, testApp } from './support';

/** Another team's stack: its own resources, with docrelay as one construct among them. */
class PlatformStack extends Stack {
  readonly bucket: Bucket;
  readonly key: Key;
  readonly bus: EventBus;
  readonly topic: Topic;
  readonly relay: DocRelay;
  readonly reader: Role;

  constructor() {
    super(testApp(), 'Platform');
    this.key = new Key(this, 'PlatformKey', { enableKeyRotation: true });
    this.bucket = new Bucket(this, 'PlatformDocuments', {
      encryption: BucketEncryption.KMS,
      encryptionKey: this.key,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
    });
    this.bus = new EventBus(this, 'PlatformBus');
    this.topic = new Topic(this, 'OnCall');
    const sealing = Secret.fromSecretNameV2(this, 'Sealing', 'platform/docrelay-sealing');
    this.relay = new DocRelay(this, 'Documents', {
      config: fixtureConfig(),
      bucket: { existing: this.bucket },
      eventBus: this.bus,
      alarmTopic: this.topic,
      sealingSecret: sealing,
    });
    this.reader = new Role(this, 'Reader', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    this.relay.grantReadJobs(this.reader);
  }
}

describe('DocRelay in another CDK app', () => {
  const stack = new PlatformStack();
  const template = Template.fromStack(stack);
  const id = (construct: { node: { defaultChild?: unknown } }) => logicalId(stack, construct);

  test('it uses the given bucket and creates neither a bucket nor a sealing secret', () => {
    template.resourceCountIs('AWS::S3::Bucket', 1);
    template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    expect(stack.relay.bucket).toBe(stack.bucket);
    expect(stack.relay.accessLogsBucket).toBeUndefined();
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          DOCRELAY_BUCKET: { Ref: id(stack.bucket) },
          DOCRELAY_SEALING_SECRET: 'platform/docrelay-sealing',
          DOCRELAY_EVENT_BUS: { 'Fn::GetAtt': [id(stack.bus), 'Arn'] },
        }),
      },
    });
  });

  test('the worker writes to the given bucket and may use its key', () => {
    const worker = id(stack.relay.workerFunction.executionRole);
    expect(roleGrants(template, worker, 's3:')).toEqual(
      ['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject', 's3:ListBucket', 's3:PutObject'].map(
        (action) =>
          action === 's3:ListBucket'
            ? `${action} <${id(stack.bucket)}.Arn>`
            : `${action} <${id(stack.bucket)}.Arn>/documents/*`,
      ),
    );
    expect(roleGrants(template, worker, 'kms:')).toEqual(
      ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey'].map(
        (action) => `${action} <${id(stack.key)}.Arn>`,
      ),
    );
  });

  test('events go to the given bus and the event rules listen on it', () => {
    expect(roleGrants(template, id(stack.relay.workerFunction.executionRole), 'events:')).toEqual([
      `events:PutEvents <${id(stack.bus)}.Arn>`,
    ]);
    template.hasResourceProperties('AWS::Events::Rule', {
      EventBusName: { Ref: id(stack.bus) },
      EventPattern: { source: ['myapp.orders'], 'detail-type': ['Order Paid'] },
    });
  });

  test('alarms notify the given topic, and no topic is created', () => {
    template.resourceCountIs('AWS::SNS::Topic', 1);
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms).toHaveLength(stack.relay.monitoring.alarms.length);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: id(stack.topic) }]);
    }
  });

  test('grantReadJobs lets a principal invoke the read routes (jobs, the list, deliveries) and nothing else', () => {
    expect(roleActions(template, id(stack.reader))).toEqual(['execute-api:Invoke']);
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: id(stack.reader) }],
      PolicyDocument: {
        Statement: [
          {
            Action: 'execute-api:Invoke',
            Effect: 'Allow',
            Resource: ['/v1/deliveries/*', '/v1/jobs', '/v1/jobs/*'].map((path) => ({
              'Fn::Join': ['', Match.arrayWith([{ Ref: id(stack.relay.api) }, `/$default/GET${path}`])],
            })),
          },
        ],
      },
    });
  });

  test('the types allow an existing bucket or settings for a new one, never both (checked by tsc)', () => {
    const existing: DocRelayBucketOption = { existing: stack.bucket };
    const created: DocRelayBucketOption = { create: { accessLogsPrefix: 'x/' } };
    // @ts-expect-error an existing bucket cannot take settings for a created one
    const both: DocRelayBucketOption = { existing: stack.bucket, create: {} };
    expect([existing, created, both]).toHaveLength(3);
  });
});
