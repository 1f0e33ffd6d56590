/** The DocRelay construct and stack: fine-grained assertions on the synthesized template. */
import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { SubnetType, Vpc } from 'aws-cdk-lib/aws-ec2';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { ConfigError } from '../../functions/config/errors';
import { LAMBDA_ENV } from '../../functions/config/lambda-env';
import { JOB_TABLE } from '../../functions/config/table-contract';
import { DocRelay } from '../../lib/docrelay';
import type { DocRelayFunction } from '../../lib/docrelay-function';
import { DocRelayStack } from '../../lib/docrelay-stack';
import { fixtureConfig, logicalId, roleActions, roleGrants, synthStack, testApp } from './support';

const functionsOf = (relay: DocRelay) => ({
  ingest: relay.ingestFunction,
  worker: relay.workerFunction,
  'jobs-api': relay.jobsApiFunction,
  reconciler: relay.reconcilerFunction,
  'event-ingest': relay.eventIngestFunction!,
});

describe('DocRelay with its defaults', () => {
  const { stack, template } = synthStack();
  const relay = stack.docRelay;
  const id = (construct: { node: { defaultChild?: unknown } }) => logicalId(stack, construct);

  describe('HTTP API', () => {
    test('each webhook integration’s /v1/hooks/<id> reaches the ingest function, any method (it answers 405), no authorizer', () => {
      for (const hook of ['github-releases', 'stripe_invoices']) {
        template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
          RouteKey: `ANY /v1/hooks/${hook}`,
          AuthorizationType: 'NONE',
        });
      }
      template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
        IntegrationType: 'AWS_PROXY',
        PayloadFormatVersion: '2.0',
        IntegrationUri: { 'Fn::GetAtt': [id(relay.ingestFunction), 'Arn'] },
      });
    });

    test('GET /v1/jobs/{jobId} reaches the jobs function with IAM authorization', () => {
      template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
        RouteKey: 'GET /v1/jobs/{jobId}',
        AuthorizationType: 'AWS_IAM',
      });
      template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
        IntegrationUri: { 'Fn::GetAtt': [id(relay.jobsApiFunction), 'Arn'] },
      });
    });

    test('only the webhook integrations’ routes and the three read routes exist (no catch-all route)', () => {
      const webhookIds = fixtureConfig()
        .integrations.filter((integration) => integration.verify !== undefined)
        .map((integration) => integration.id);
      expect([...relay.webhookRoutes.keys()]).toEqual(webhookIds);
      template.resourceCountIs('AWS::ApiGatewayV2::Route', webhookIds.length + 3);
      for (const route of ['GET /v1/jobs/{jobId}', 'GET /v1/jobs', 'GET /v1/deliveries/{deliveryId}']) {
        template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
          RouteKey: route,
          AuthorizationType: 'AWS_IAM',
        });
      }
    });

    test('the $default stage is throttled with the default limits and writes JSON access logs', () => {
      template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
        StageName: '$default',
        AutoDeploy: true,
        DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
        AccessLogSettings: {
          DestinationArn: { 'Fn::GetAtt': [id(relay.accessLogGroup), 'Arn'] },
          Format: Match.stringLikeRegexp('"requestId":"\\$context.requestId"'),
        },
      });
      template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
    });
  });

  describe('Lambda functions', () => {
    test.each(Object.keys(functionsOf(relay)))('%s: arm64, Node.js 24, no tracing, own log group', (name) => {
      const fn = functionsOf(relay)[name as keyof ReturnType<typeof functionsOf>];
      const props = template.toJSON().Resources[id(fn)].Properties;
      expect(props).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        LoggingConfig: { LogGroup: { Ref: id(fn.functionLogGroup) } },
        Role: { 'Fn::GetAtt': [id(fn.executionRole), 'Arn'] },
      });
      expect(props.FunctionName).toBeUndefined();
      expect(props.TracingConfig).toBeUndefined();
    });

    test.each(Object.keys(functionsOf(relay)))(
      '%s: environment names the resources and Powertools; no NODE_OPTIONS (source maps are opt-in)',
      (name) => {
        const fn = functionsOf(relay)[name as keyof ReturnType<typeof functionsOf>];
        const env = template.toJSON().Resources[id(fn)].Properties.Environment.Variables;
        expect(env).toEqual({
          [LAMBDA_ENV.configPath]: 'docrelay.config.json',
          [LAMBDA_ENV.tableName]: { Ref: id(relay.table) },
          [LAMBDA_ENV.queueUrl]: { Ref: id(relay.queue) },
          [LAMBDA_ENV.dlqUrl]: { Ref: id(relay.deadLetterQueue) },
          [LAMBDA_ENV.bucket]: { Ref: id(relay.bucket) },
          [LAMBDA_ENV.sealingSecretName]: { Ref: id(relay.sealingSecret) },
          [LAMBDA_ENV.maxReceiveCount]: '8',
          [LAMBDA_ENV.deployment]: 'Test',
          [LAMBDA_ENV.leaseSeconds]: '1800',
          POWERTOOLS_SERVICE_NAME: `Test-${name}`,
          POWERTOOLS_METRICS_NAMESPACE: 'docrelay/Test',
          POWERTOOLS_LOG_LEVEL: 'INFO',
          [LAMBDA_ENV.tracing]: 'false',
        });
      },
    );

    test('memory and timeouts are the documented defaults', () => {
      const sizes = Object.fromEntries(
        Object.entries(functionsOf(relay)).map(([name, fn]) => {
          const props = template.toJSON().Resources[id(fn)].Properties;
          return [name, [props.MemorySize, props.Timeout]];
        }),
      );
      expect(sizes).toEqual({
        ingest: [512, 10],
        worker: [1024, 300],
        'jobs-api': [256, 10],
        reconciler: [256, 60],
        'event-ingest': [256, 30],
      });
    });

    test('event-ingest sends failed asynchronous invocations to the events dead-letter queue', () => {
      template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
        FunctionName: { Ref: id(relay.eventIngestFunction!) },
        MaximumRetryAttempts: 2,
        DestinationConfig: {
          OnFailure: { Destination: { 'Fn::GetAtt': [id(relay.eventsDeadLetterQueue!), 'Arn'] } },
        },
      });
    });
  });

  describe('SQS', () => {
    test('the jobs queue has SSE, a visibility timeout of six worker timeouts and a DLQ after 8 + 16 receives', () => {
      template.hasResourceProperties('AWS::SQS::Queue', {
        VisibilityTimeout: 6 * 300,
        SqsManagedSseEnabled: true,
        RedrivePolicy: {
          deadLetterTargetArn: { 'Fn::GetAtt': [id(relay.deadLetterQueue), 'Arn'] },
          maxReceiveCount: 8 + 16,
        },
      });
      template.hasResourceProperties('AWS::SQS::Queue', {
        MessageRetentionPeriod: Duration.days(14).toSeconds(),
        SqsManagedSseEnabled: true,
      });
    });

    test('every queue refuses requests without TLS', () => {
      for (const queue of [relay.queue, relay.deadLetterQueue, relay.eventsDeadLetterQueue!]) {
        template.hasResourceProperties('AWS::SQS::QueuePolicy', {
          Queues: [{ Ref: id(queue) }],
          PolicyDocument: {
            Statement: Match.arrayWith([
              Match.objectLike({
                Effect: 'Deny',
                Condition: { Bool: { 'aws:SecureTransport': 'false' } },
              }),
            ]),
          },
        });
      }
    });

    test('the worker reads the jobs queue one message at a time, with partial batch responses and maxConcurrency from the config', () => {
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        FunctionName: { Ref: id(relay.workerFunction) },
        EventSourceArn: { 'Fn::GetAtt': [id(relay.queue), 'Arn'] },
        BatchSize: 1,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: 3 },
      });
      expect(
        template.toJSON().Resources[id(relay.workerFunction)].Properties.ReservedConcurrentExecutions,
      ).toBeUndefined();
    });
  });

  describe('DynamoDB', () => {
    test('the table is on-demand, recoverable, expires items by ttl and keeps the key contract', () => {
      template.hasResource('AWS::DynamoDB::Table', {
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
        Properties: {
          BillingMode: 'PAY_PER_REQUEST',
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          TimeToLiveSpecification: { AttributeName: JOB_TABLE.ttlAttribute, Enabled: true },
          KeySchema: [{ AttributeName: JOB_TABLE.partitionKey, KeyType: 'HASH' }],
          GlobalSecondaryIndexes: [
            {
              IndexName: JOB_TABLE.openJobsIndex,
              KeySchema: [
                { AttributeName: JOB_TABLE.openPartitionKey, KeyType: 'HASH' },
                { AttributeName: JOB_TABLE.openSortKey, KeyType: 'RANGE' },
              ],
              Projection: { ProjectionType: JOB_TABLE.openJobsProjection },
            },
            {
              IndexName: JOB_TABLE.jobsByTimeIndex,
              KeySchema: [
                { AttributeName: JOB_TABLE.listPartitionKey, KeyType: 'HASH' },
                { AttributeName: JOB_TABLE.listSortKey, KeyType: 'RANGE' },
              ],
              Projection: {
                ProjectionType: 'INCLUDE',
                NonKeyAttributes: [...JOB_TABLE.jobsByTimeAttributes],
              },
            },
            {
              IndexName: JOB_TABLE.byDeliveryIndex,
              KeySchema: [{ AttributeName: JOB_TABLE.deliveryIdKey, KeyType: 'HASH' }],
              Projection: { ProjectionType: 'KEYS_ONLY' },
            },
          ],
          AttributeDefinitions: Match.arrayWith([
            { AttributeName: JOB_TABLE.openPartitionKey, AttributeType: 'S' },
            { AttributeName: JOB_TABLE.openSortKey, AttributeType: 'N' },
          ]),
        },
      });
    });
  });

  describe('S3', () => {
    test('the documents bucket blocks public access, is encrypted (SSE-S3), versioned, logged and retained', () => {
      template.hasResource('AWS::S3::Bucket', {
        DeletionPolicy: 'Retain',
        Properties: {
          PublicAccessBlockConfiguration: {
            BlockPublicAcls: true,
            BlockPublicPolicy: true,
            IgnorePublicAcls: true,
            RestrictPublicBuckets: true,
          },
          BucketEncryption: {
            ServerSideEncryptionConfiguration: [
              { ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } },
            ],
          },
          VersioningConfiguration: { Status: 'Enabled' },
          LoggingConfiguration: {
            DestinationBucketName: { Ref: id(relay.accessLogsBucket!) },
            LogFilePrefix: 'documents/',
          },
          LifecycleConfiguration: {
            Rules: [
              Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } }),
              Match.objectLike({ NoncurrentVersionExpiration: { NoncurrentDays: 30 } }),
            ],
          },
        },
      });
    });

    test('both buckets refuse requests without TLS', () => {
      for (const bucket of [relay.bucket, relay.accessLogsBucket!]) {
        template.hasResourceProperties('AWS::S3::BucketPolicy', {
          Bucket: { Ref: id(bucket) },
          PolicyDocument: {
            Statement: Match.arrayWith([
              Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
            ]),
          },
        });
      }
    });
  });

  describe('secrets', () => {
    test('only the sealing secret is created, with a generated value, and retained', () => {
      template.resourceCountIs('AWS::SecretsManager::Secret', 1);
      template.hasResource('AWS::SecretsManager::Secret', {
        DeletionPolicy: 'Retain',
        Properties: { GenerateSecretString: { PasswordLength: 64 }, Name: Match.absent() },
      });
    });

    test('the config secrets are imported by their deployment-prefixed names and matched with the random suffix', () => {
      expect([...relay.configSecrets.keys()].sort()).toEqual([
        'test/github-webhook',
        'test/github-webhook-next',
        'test/service-api-key',
        'test/stripe-webhook',
      ]);
      const arn = (name: string) =>
        `arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:Test/${name}-??????`;
      const sealing = `<${id(relay.sealingSecret)}>`;
      expect(roleGrants(template, id(relay.ingestFunction.executionRole), 'secretsmanager:')).toEqual(
        [
          ...['test/github-webhook', 'test/github-webhook-next', 'test/stripe-webhook'].map(
            (name) => `secretsmanager:GetSecretValue ${arn(name)}`,
          ),
          `secretsmanager:GetSecretValue ${sealing}`,
        ].sort(),
      );
      expect(roleGrants(template, id(relay.workerFunction.executionRole), 'secretsmanager:')).toEqual(
        [
          `secretsmanager:GetSecretValue ${arn('test/service-api-key')}`,
          `secretsmanager:GetSecretValue ${sealing}`,
        ].sort(),
      );
    });
  });

  describe('EventBridge', () => {
    test('one rule per event integration wraps the event with its integration id, with retries and a DLQ', () => {
      template.resourcePropertiesCountIs('AWS::Events::Rule', { EventPattern: Match.anyValue() }, 1);
      template.hasResourceProperties('AWS::Events::Rule', {
        EventPattern: { source: ['myapp.orders'], 'detail-type': ['Order Paid'] },
        EventBusName: Match.absent(),
        Targets: [
          {
            Arn: { 'Fn::GetAtt': [id(relay.eventIngestFunction!), 'Arn'] },
            InputTransformer: {
              InputPathsMap: { f1: '$' },
              InputTemplate: '{"integrationId":"order-events","event":<f1>}',
            },
            DeadLetterConfig: { Arn: { 'Fn::GetAtt': [id(relay.eventsDeadLetterQueue!), 'Arn'] } },
            RetryPolicy: { MaximumRetryAttempts: 8, MaximumEventAgeInSeconds: 86_400 },
            Id: Match.anyValue(),
          },
        ],
      });
    });

    test('the reconciler runs every 5 minutes', () => {
      template.hasResourceProperties('AWS::Events::Rule', {
        ScheduleExpression: 'rate(5 minutes)',
        Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [id(relay.reconcilerFunction), 'Arn'] } })],
      });
    });

    test('the worker may put events on the default bus only', () => {
      expect(roleGrants(template, id(relay.workerFunction.executionRole), 'events:')).toEqual([
        'events:PutEvents arn:<AWS::Partition>:events:<AWS::Region>:<AWS::AccountId>:event-bus/default',
      ]);
    });
  });

  describe('monitoring', () => {
    const alarmOn = (metricName: string, threshold: number, dimension: unknown) =>
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: metricName,
        Threshold: threshold,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Dimensions: [dimension],
        AlarmActions: [{ Ref: id(relay.monitoring.alarmTopic as never) }],
        OKActions: [{ Ref: id(relay.monitoring.alarmTopic as never) }],
      });

    test('the dead-letter queues alarm as soon as one message is in them', () => {
      alarmOn('ApproximateNumberOfMessagesVisible', 1, {
        Name: 'QueueName',
        Value: { 'Fn::GetAtt': [id(relay.deadLetterQueue), 'QueueName'] },
      });
      alarmOn('ApproximateNumberOfMessagesVisible', 1, {
        Name: 'QueueName',
        Value: { 'Fn::GetAtt': [id(relay.eventsDeadLetterQueue!), 'QueueName'] },
      });
    });

    test('worker errors, the oldest job message (30 min) and API 5xx alarm', () => {
      alarmOn('Errors', 1, { Name: 'FunctionName', Value: { Ref: id(relay.workerFunction) } });
      alarmOn('ApproximateAgeOfOldestMessage', 1800, {
        Name: 'QueueName',
        Value: { 'Fn::GetAtt': [id(relay.queue), 'QueueName'] },
      });
      alarmOn('5xx', 1, { Name: 'ApiId', Value: { Ref: id(relay.api) } });
      template.resourceCountIs('AWS::CloudWatch::Alarm', 15);
    });

    test('an alarm when the worker gives up a job’s event (its EMF metric: the worker’s namespace and service)', () => {
      // The same names the worker function's Powertools Metrics publish under (its environment, above).
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'EventsNotPublished',
        Namespace: 'docrelay/Test',
        Threshold: 1,
        Dimensions: [{ Name: 'service', Value: 'Test-worker' }],
        AlarmActions: [{ Ref: id(relay.monitoring.alarmTopic as never) }],
      });
    });

    test('a TLS-only alarm topic and a dashboard are created', () => {
      template.resourceCountIs('AWS::SNS::Topic', 1);
      template.hasResourceProperties('AWS::SNS::TopicPolicy', {
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
      template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    });
  });

  describe('IAM least privilege', () => {
    const logs = ['logs:CreateLogStream', 'logs:PutLogEvents'];
    const expected: Record<string, string[]> = {
      ingest: [
        'dynamodb:BatchGetItem',
        'dynamodb:BatchWriteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'secretsmanager:GetSecretValue',
        'sqs:SendMessage',
      ],
      worker: [
        'dynamodb:GetItem',
        'dynamodb:UpdateItem',
        'events:PutEvents',
        's3:AbortMultipartUpload',
        's3:DeleteObject',
        's3:GetObject',
        's3:ListBucket',
        's3:PutObject',
        'secretsmanager:GetSecretValue',
        // the event source mapping's grant
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:ReceiveMessage',
        'sqs:SendMessage',
      ],
      'jobs-api': ['dynamodb:GetItem', 'dynamodb:Query', 's3:GetObject'],
      reconciler: [
        'dynamodb:BatchGetItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
        'sqs:GetQueueAttributes',
        'sqs:SendMessage',
      ],
      'event-ingest': [
        'dynamodb:BatchGetItem',
        'dynamodb:BatchWriteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'secretsmanager:GetSecretValue',
        'sqs:SendMessage',
      ],
    };

    test.each(Object.keys(expected))('%s is allowed exactly the actions it uses', (name) => {
      const fn = functionsOf(relay)[name as keyof ReturnType<typeof functionsOf>];
      expect(roleActions(template, id(fn.executionRole))).toEqual([...logs, ...expected[name]!].sort());
    });

    test('no role has a managed policy or a wildcard action', () => {
      expect(Object.keys(template.findResources('AWS::IAM::Role')).length).toBeGreaterThanOrEqual(5);
      expect(Object.keys(template.findResources('AWS::IAM::Policy')).length).toBeGreaterThanOrEqual(5);
      for (const role of Object.values(template.findResources('AWS::IAM::Role'))) {
        expect(role.Properties.ManagedPolicyArns).toBeUndefined();
      }
      for (const policy of Object.values(template.findResources('AWS::IAM::Policy'))) {
        for (const statement of policy.Properties.PolicyDocument.Statement) {
          for (const action of [statement.Action].flat()) expect(action).not.toContain('*');
        }
      }
    });

    test('the worker sends only to the jobs queue (a job outlasting an outage) and the dead-letter queue', () => {
      const resources: unknown[] = [];
      for (const policy of Object.values(template.findResources('AWS::IAM::Policy'))) {
        if (
          JSON.stringify(policy.Properties.Roles) !==
          JSON.stringify([{ Ref: id(relay.workerFunction.executionRole) }])
        ) {
          continue;
        }
        for (const statement of policy.Properties.PolicyDocument.Statement) {
          if ([statement.Action].flat().includes('sqs:SendMessage'))
            resources.push(...[statement.Resource].flat());
        }
      }
      expect(resources).toEqual(
        expect.arrayContaining([
          { 'Fn::GetAtt': [id(relay.queue), 'Arn'] },
          { 'Fn::GetAtt': [id(relay.deadLetterQueue), 'Arn'] },
        ]),
      );
      expect(resources).toHaveLength(2);
    });

    test('S3 object access is scoped to the key pattern’s literal prefix', () => {
      const objects = `<${id(relay.bucket)}.Arn>/documents/*`;
      expect(roleGrants(template, id(relay.workerFunction.executionRole), 's3:')).toEqual([
        ...['s3:AbortMultipartUpload', 's3:DeleteObject', 's3:GetObject'].map(
          (action) => `${action} ${objects}`,
        ),
        `s3:ListBucket <${id(relay.bucket)}.Arn>`,
        `s3:PutObject ${objects}`,
      ]);
      // Listing, for the files a dead attempt left, is bounded to the same prefix.
      template.hasResourceProperties('AWS::IAM::Policy', {
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Action: 's3:ListBucket',
              Condition: { StringLike: { 's3:prefix': ['documents/*'] } },
            }),
          ]),
        },
      });
      expect(roleGrants(template, id(relay.jobsApiFunction.executionRole), 's3:')).toEqual([
        `s3:GetObject ${objects}`,
      ]);
    });

    test('the reconciler queries the open-jobs index only, and the jobs API the two listing indexes', () => {
      const table = `<${id(relay.table)}.Arn>`;
      expect(roleGrants(template, id(relay.reconcilerFunction.executionRole), 'dynamodb:')).toEqual(
        [
          ...['BatchGetItem', 'GetItem', 'PutItem', 'UpdateItem'].map(
            (action) => `dynamodb:${action} ${table}`,
          ),
          `dynamodb:Query ${table}/index/${JOB_TABLE.openJobsIndex}`,
        ].sort(),
      );
      expect(roleGrants(template, id(relay.jobsApiFunction.executionRole), 'dynamodb:')).toEqual([
        `dynamodb:GetItem ${table}`,
        `dynamodb:Query ${table}/index/${JOB_TABLE.byDeliveryIndex}`,
        `dynamodb:Query ${table}/index/${JOB_TABLE.jobsByTimeIndex}`,
      ]);
    });
  });

  describe('outputs and names', () => {
    test('the stack outputs the API URL, one webhook URL per webhook integration and the resource names', () => {
      const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
      expect(Object.keys(outputs)).toEqual(
        expect.arrayContaining([
          'ApiUrl',
          'JobsApiUrl',
          'WebhookUrlGithubReleases',
          'WebhookUrlStripeInvoices',
          'WebhookUrlOrderEvents',
          'TableName',
          'BucketName',
          'QueueUrl',
          'QueueName',
          'DeadLetterQueueUrl',
          'AlarmTopicArn',
          'DashboardUrl',
        ]),
      );
      expect(JSON.stringify(outputs.WebhookUrlGithubReleases!.Value)).toContain('/v1/hooks/github-releases');
      expect(JSON.stringify(outputs.WebhookUrlStripeInvoices!.Value)).toContain('/v1/hooks/stripe_invoices');
      expect(Object.keys(outputs).filter((key) => key.startsWith('SetSecret'))).toEqual([]);
    });

    test('no physical names are hard-coded, so two deployments fit in one account', () => {
      const named = [
        ['AWS::S3::Bucket', 'BucketName'],
        ['AWS::DynamoDB::Table', 'TableName'],
        ['AWS::SQS::Queue', 'QueueName'],
        ['AWS::Lambda::Function', 'FunctionName'],
        ['AWS::IAM::Role', 'RoleName'],
        ['AWS::SNS::Topic', 'TopicName'],
        ['AWS::Logs::LogGroup', 'LogGroupName'],
        ['AWS::CloudWatch::Dashboard', 'DashboardName'],
        ['AWS::CloudWatch::Alarm', 'AlarmName'],
        ['AWS::Events::Rule', 'Name'],
        ['AWS::SecretsManager::Secret', 'Name'],
      ] as const;
      for (const [type, property] of named) {
        const resources = Object.values(template.findResources(type));
        // Each type is in the template, so the check below reads something.
        expect([type, resources.length > 0]).toEqual([type, true]);
        for (const resource of resources) {
          expect([type, resource.Properties?.[property]]).toEqual([type, undefined]);
        }
      }
      const app = testApp();
      const config = fixtureConfig();
      new DocRelayStack(app, 'One', { docRelay: { config } });
      new DocRelayStack(app, 'Two', { docRelay: { config } });
      expect(() => app.synth()).not.toThrow();
    });
  });
});

describe('DocRelay with props', () => {
  test('throttling, batch size, max receive count, worker timeout and sizes come from props', () => {
    const { stack, template } = synthStack({
      throttle: { rateLimit: 5, burstLimit: 7 },
      batchSize: 2,
      maxReceiveCount: 3,
      functions: {
        worker: { timeout: Duration.seconds(120), memorySize: 512 },
        ingest: { memorySize: 1024 },
      },
      reconcileEvery: Duration.minutes(10),
      logRetention: 7,
    });
    const relay = stack.docRelay;
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      DefaultRouteSettings: { ThrottlingRateLimit: 5, ThrottlingBurstLimit: 7 },
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { BatchSize: 2 });
    template.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: 720,
      RedrivePolicy: Match.objectLike({ maxReceiveCount: 3 + 16 }),
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Timeout: 120,
      MemorySize: 512,
      Environment: {
        Variables: Match.objectLike({ DOCRELAY_LEASE_SECONDS: '720', DOCRELAY_MAX_RECEIVE_COUNT: '3' }),
      },
    });
    const ingest = template.toJSON().Resources[logicalId(stack, relay.ingestFunction)].Properties;
    expect([ingest.MemorySize, ingest.Timeout]).toEqual([1024, 10]);
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(10 minutes)' });
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 7 });
  });

  test('a service.maxConcurrency of 1 reserves one execution for the worker and caps the event source at SQS’s floor of 2', () => {
    const config = fixtureConfig();
    const single = { ...config, service: { ...config.service, maxConcurrency: 1 } };
    for (const functions of [{}, { worker: { reservedConcurrentExecutions: 1 } }]) {
      const { stack, template } = synthStack({ functions }, single);
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        ScalingConfig: { MaximumConcurrency: 2 },
      });
      expect(
        template.toJSON().Resources[logicalId(stack, stack.docRelay.workerFunction)].Properties
          .ReservedConcurrentExecutions,
      ).toBe(1);
    }
  });

  test('a service.maxConcurrency of 1 with another reserved concurrency fails synth with one located config problem', () => {
    const config = fixtureConfig();
    const single = { ...config, service: { ...config.service, maxConcurrency: 1 } };
    let thrown: unknown;
    try {
      synthStack(
        { configSource: 'docrelay.yaml', functions: { worker: { reservedConcurrentExecutions: 5 } } },
        single,
      );
    } catch (error) {
      thrown = error;
    }
    // A ConfigError: the CDK app prints its lines without a stack trace (bin/app.ts).
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).message.split('\n')).toEqual([
      'docrelay.yaml: 1 problem',
      expect.stringMatching(
        /^ {2}- service\.maxConcurrency: 1 is enforced by reserving 1 .*functions\.worker\.reservedConcurrentExecutions is 5: remove it, set it to 1, or raise service\.maxConcurrency$/,
      ),
    ]);
  });

  test('per-function props: VPC and subnets, reserved concurrency, extra environment under docrelay’s own', () => {
    const stack = new Stack(testApp(), 'Vpc');
    const vpc = new Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 1 });
    const relay = new DocRelay(stack, 'Relay', {
      config: fixtureConfig(),
      functions: {
        worker: {
          vpc,
          vpcSubnets: { subnetType: SubnetType.PRIVATE_WITH_EGRESS },
          reservedConcurrentExecutions: 5,
          environment: { HTTPS_PROXY: 'http://proxy.internal:3128', DOCRELAY_TABLE: 'ignored' },
        },
      },
    });
    const template = Template.fromStack(stack);
    const worker = template.toJSON().Resources[logicalId(stack, relay.workerFunction)].Properties;
    expect(worker.VpcConfig.SubnetIds).toHaveLength(2);
    expect(worker.ReservedConcurrentExecutions).toBe(5);
    expect(worker.Environment.Variables.HTTPS_PROXY).toBe('http://proxy.internal:3128');
    expect(worker.Environment.Variables.DOCRELAY_TABLE).toEqual({ Ref: logicalId(stack, relay.table) });
    const ingest = template.toJSON().Resources[logicalId(stack, relay.ingestFunction)].Properties;
    expect([ingest.VpcConfig, ingest.Environment.Variables.HTTPS_PROXY]).toEqual([undefined, undefined]);
  });

  test('a function in a VPC may manage its network interfaces (what AWSLambdaVPCAccessExecutionRole grants), others may not', () => {
    const stack = new Stack(testApp(), 'VpcRole');
    const vpc = new Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 1 });
    const relay = new DocRelay(stack, 'Relay', { config: fixtureConfig(), functions: { worker: { vpc } } });
    const template = Template.fromStack(stack);
    const eni = [
      'ec2:AssignPrivateIpAddresses',
      'ec2:CreateNetworkInterface',
      'ec2:DeleteNetworkInterface',
      'ec2:DescribeNetworkInterfaces',
      'ec2:DescribeSubnets',
      'ec2:UnassignPrivateIpAddresses',
    ];
    expect(roleActions(template, logicalId(stack, relay.workerFunction.executionRole))).toEqual(
      expect.arrayContaining(eni),
    );
    expect(roleActions(template, logicalId(stack, relay.ingestFunction.executionRole))).not.toContain(
      'ec2:CreateNetworkInterface',
    );
    // Lambda checks the role when the function is created: the function waits for the policy.
    const worker = template.toJSON().Resources[logicalId(stack, relay.workerFunction)];
    const policy = relay.workerFunction.executionRole.node.tryFindChild('DefaultPolicy');
    expect(worker.DependsOn).toContain(logicalId(stack, policy!));
  });

  test('createSecrets creates every config secret by its name, with a random placeholder and an output saying how to set it', () => {
    const { template } = synthStack({ createSecrets: true });
    for (const name of [
      'test/service-api-key',
      'test/github-webhook',
      'test/github-webhook-next',
      'test/stripe-webhook',
    ]) {
      template.hasResource('AWS::SecretsManager::Secret', {
        DeletionPolicy: 'Retain',
        Properties: {
          Name: `Test/${name}`,
          GenerateSecretString: { PasswordLength: 48, ExcludePunctuation: true },
        },
      });
    }
    template.resourceCountIs('AWS::SecretsManager::Secret', 5);
    const outputs = Object.values(template.toJSON().Outputs as Record<string, { Value: string }>).map(
      (o) => o.Value,
    );
    expect(outputs).toContain(
      "aws secretsmanager put-secret-value --secret-id Test/test/github-webhook-next --secret-string '<value>'",
    );
    expect(
      outputs.filter((value) => typeof value === 'string' && value.startsWith('aws secretsmanager')),
    ).toHaveLength(4);
  });

  test('an encryption key encrypts the bucket, table, queues, secrets and topic, and the functions may use it', () => {
    const stack = new Stack(testApp(), 'Keyed');
    const key = new Key(stack, 'Key', { enableKeyRotation: true });
    const relay = new DocRelay(stack, 'Relay', {
      config: fixtureConfig(),
      encryptionKey: key,
      createSecrets: true,
    });
    const template = Template.fromStack(stack);
    const keyArn = { 'Fn::GetAtt': [logicalId(stack, key), 'Arn'] };
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          {
            ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: keyArn },
            BucketKeyEnabled: true,
          },
        ],
      },
    });
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: keyArn },
    });
    for (const queue of [relay.queue, relay.deadLetterQueue]) {
      expect(template.toJSON().Resources[logicalId(stack, queue)].Properties.KmsMasterKeyId).toEqual(keyArn);
    }
    template.allResourcesProperties('AWS::SecretsManager::Secret', { KmsKeyId: keyArn });
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: keyArn });
    // CloudWatch may publish alarms to the encrypted topic.
    template.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
          }),
        ]),
      },
    });
    expect(roleActions(template, logicalId(stack, relay.workerFunction.executionRole))).toEqual(
      expect.arrayContaining(['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey']),
    );
    const jobsApiActions = roleActions(template, logicalId(stack, relay.jobsApiFunction.executionRole));
    expect(jobsApiActions.filter((action) => action.startsWith('kms:'))).toEqual(['kms:Decrypt']);
  });

  test('a brought bucket’s KMS key is used only by the functions that read or write objects (worker, jobs-api)', () => {
    const stack = new Stack(testApp(), 'BroughtBucket');
    const dataKey = new Key(stack, 'DataKey', { enableKeyRotation: true });
    const bucketKey = Key.fromKeyArn(
      stack,
      'BucketKey',
      'arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-3333-4444-555555555555',
    );
    const relay = new DocRelay(stack, 'Relay', {
      config: fixtureConfig(),
      encryptionKey: dataKey,
      bucket: { existing: Bucket.fromBucketName(stack, 'Docs', 'my-documents'), encryptionKey: bucketKey },
    });
    const template = Template.fromStack(stack);
    const dataKeyArn = { 'Fn::GetAtt': [logicalId(stack, dataKey), 'Arn'] };
    /** The KMS statements of a function's role: its actions by key. */
    const kmsOf = (fn: DocRelayFunction) => {
      const role = logicalId(stack, fn.executionRole);
      return Object.values(template.findResources('AWS::IAM::Policy'))
        .filter((policy) => (policy.Properties.Roles as Array<{ Ref?: string }>).some((r) => r.Ref === role))
        .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Array<Record<string, unknown>>)
        .filter((statement) => [statement.Action].flat().some((a) => String(a).startsWith('kms:')))
        .flatMap((statement) =>
          [statement.Resource].flat().map((resource) => [resource, [statement.Action].flat().join(' ')]),
        );
    };
    const write = 'kms:Decrypt kms:Encrypt kms:GenerateDataKey';
    expect(kmsOf(relay.workerFunction)).toHaveLength(2);
    expect(kmsOf(relay.workerFunction)).toEqual(
      expect.arrayContaining([
        [dataKeyArn, write],
        [bucketKey.keyArn, write],
      ]),
    );
    expect(kmsOf(relay.jobsApiFunction)).toHaveLength(2);
    expect(kmsOf(relay.jobsApiFunction)).toEqual(
      expect.arrayContaining([
        [dataKeyArn, 'kms:Decrypt'],
        [bucketKey.keyArn, 'kms:Decrypt'],
      ]),
    );
    for (const fn of [relay.ingestFunction, relay.reconcilerFunction, relay.eventIngestFunction!]) {
      expect(kmsOf(fn)).toEqual([[dataKeyArn, write]]);
    }
  });

  test('without a data key, a brought bucket’s own key goes to worker and jobs-api alone', () => {
    const stack = new Stack(testApp(), 'BucketKeyOnly');
    const bucketKey = new Key(stack, 'BucketKey', { enableKeyRotation: true });
    const relay = new DocRelay(stack, 'Relay', {
      config: fixtureConfig(),
      bucket: {
        existing: Bucket.fromBucketAttributes(stack, 'Docs', {
          bucketName: 'my-documents',
          encryptionKey: bucketKey,
        }),
      },
    });
    const template = Template.fromStack(stack);
    const kms = (fn: DocRelayFunction) =>
      roleActions(template, logicalId(stack, fn.executionRole)).filter((a) => a.startsWith('kms:'));
    expect(kms(relay.workerFunction)).toEqual(['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey']);
    expect(kms(relay.jobsApiFunction)).toEqual(['kms:Decrypt']);
    for (const fn of [relay.ingestFunction, relay.reconcilerFunction, relay.eventIngestFunction!]) {
      expect(kms(fn)).toEqual([]);
    }
  });

  test('removalPolicy DESTROY applies to the table and the created bucket', () => {
    const { template } = synthStack({ removalPolicy: RemovalPolicy.DESTROY });
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
    template.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Delete',
      Properties: Match.objectLike({ VersioningConfiguration: Match.anyValue() }),
    });
  });

  test('a config without EventBridge integrations creates no event-ingest function, rule or events DLQ', () => {
    const config = fixtureConfig();
    const { stack, template } = synthStack(
      {},
      { ...config, integrations: config.integrations.filter((i) => i.eventBridge === undefined) },
    );
    expect(stack.docRelay.eventIngestFunction).toBeUndefined();
    template.resourceCountIs('AWS::Lambda::Function', 4);
    template.resourceCountIs('AWS::Events::Rule', 1);
    template.resourceCountIs('AWS::SQS::Queue', 3);
    template.resourceCountIs('AWS::CloudWatch::Alarm', 14);
  });

  test('a worker timeout shorter than twice service.timeoutSeconds is a synth warning', () => {
    const config = fixtureConfig();
    // aws-cdk-lib prints the warning as it synthesizes; the assertion below is what counts.
    jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const { stack } = synthStack({}, { ...config, service: { ...config.service, timeoutSeconds: 200 } });
    Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp('worker timeout \\(300 s\\)'));
    Annotations.fromStack(synthStack().stack).hasNoWarning('*', Match.stringLikeRegexp('worker timeout'));
    jest.restoreAllMocks();
  });

  test('a worker reserved concurrency below service.maxConcurrency is a synth warning naming both and the fix', () => {
    jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const config = fixtureConfig();
    const four = { ...config, service: { ...config.service, maxConcurrency: 4 } };
    const { stack } = synthStack({ functions: { worker: { reservedConcurrentExecutions: 1 } } }, four);
    Annotations.fromStack(stack).hasWarning(
      '*',
      Match.stringLikeRegexp(
        'reservedConcurrentExecutions \\(1\\) is below service\\.maxConcurrency \\(4\\).*capped at 2.*at least 4 or lower service\\.maxConcurrency to 1',
      ),
    );
    const enough = synthStack({ functions: { worker: { reservedConcurrentExecutions: 4 } } }, four).stack;
    Annotations.fromStack(enough).hasNoWarning('*', Match.stringLikeRegexp('reservedConcurrentExecutions'));
    jest.restoreAllMocks();
  });

  test('a batch whose jobs, one after another, can outlast the worker timeout is a synth warning', () => {
    jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const config = fixtureConfig();
    const slow = { ...config, service: { ...config.service, timeoutSeconds: 60 } };
    // 3 jobs × (60 s + a retry) = 360 s > 300 s.
    const { stack } = synthStack({ batchSize: 3 }, slow);
    Annotations.fromStack(stack).hasWarning(
      '*',
      Match.stringLikeRegexp(
        'batchSize \\(3\\).*\\(360 s\\).*raise functions\\.worker\\.timeout to 360 s or lower batchSize',
      ),
    );
    Annotations.fromStack(synthStack({ batchSize: 2 }, slow).stack).hasNoWarning(
      '*',
      Match.stringLikeRegexp('batchSize'),
    );
    jest.restoreAllMocks();
  });

  test('an ingest timeout as long as the delivery grace (60 s) fails synth with the prop named', () => {
    expect(() => synthStack({ functions: { ingest: { timeout: Duration.seconds(60) } } })).toThrow(
      /functions\.ingest\.timeout is 60 s; it must be under 60 s/,
    );
    expect(() => synthStack({ functions: { eventIngest: { timeout: Duration.seconds(90) } } })).toThrow(
      /functions\.eventIngest\.timeout is 90 s/,
    );
  });

  test('out-of-range SQS settings fail synth with the prop named', () => {
    expect(() => synthStack({ maxReceiveCount: 0 })).toThrow(/maxReceiveCount must be a whole number/);
    expect(() => synthStack({ maxReceiveCount: 985 })).toThrow(
      /maxReceiveCount must be a whole number from 1 to 984/,
    );
    expect(() => synthStack({ batchSize: 11 })).toThrow(/batchSize must be a whole number from 1 to 10/);
  });

  test('lifecycle rules and the access log prefix come from props', () => {
    const { template } = synthStack({
      bucket: {
        create: {
          lifecycleRules: [{ id: 'expire', expiration: Duration.days(400) }],
          accessLogsPrefix: 'logs/',
        },
      },
    });
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: [{ Id: 'expire', ExpirationInDays: 400, Status: 'Enabled' }] },
      LoggingConfiguration: Match.objectLike({ LogFilePrefix: 'logs/' }),
    });
  });
});

describe('DocRelay with tracing', () => {
  const { stack, template } = synthStack({ tracing: true });
  const relay = stack.docRelay;
  const id = (construct: { node: { defaultChild?: unknown } }) => logicalId(stack, construct);
  const plain = synthStack();

  test.each(Object.keys(functionsOf(relay)))(
    '%s: active tracing, the handler told to load the Tracer, and the X-Ray write actions on its role',
    (name) => {
      const fn = functionsOf(relay)[name as keyof ReturnType<typeof functionsOf>];
      const props = template.toJSON().Resources[id(fn)].Properties;
      expect(props.TracingConfig).toEqual({ Mode: 'Active' });
      expect(props.Environment.Variables[LAMBDA_ENV.tracing]).toBe('true');

      const untraced = functionsOf(plain.stack.docRelay)[name as keyof ReturnType<typeof functionsOf>];
      expect(roleActions(template, id(fn.executionRole))).toEqual(
        [
          ...roleActions(plain.template, logicalId(plain.stack, untraced.executionRole)),
          'xray:PutTelemetryRecords',
          'xray:PutTraceSegments',
        ].sort(),
      );
    },
  );
});

describe('DocRelay with source maps', () => {
  const { stack, template } = synthStack({ sourceMaps: true });
  const relay = stack.docRelay;
  const id = (construct: { node: { defaultChild?: unknown } }) => logicalId(stack, construct);

  test.each(Object.keys(functionsOf(relay)))('%s: Node applies the source map to stack traces', (name) => {
    const fn = functionsOf(relay)[name as keyof ReturnType<typeof functionsOf>];
    const env = template.toJSON().Resources[id(fn)].Properties.Environment.Variables;
    expect(env.NODE_OPTIONS).toBe('--enable-source-maps');
  });

  test('a NODE_OPTIONS of the caller passes through when source maps are off, and gives way when on', () => {
    const functions = { ingest: { environment: { NODE_OPTIONS: '--max-old-space-size=200' } } };
    const off = synthStack({ functions });
    const on = synthStack({ functions, sourceMaps: true });
    const nodeOptions = (synth: ReturnType<typeof synthStack>) =>
      synth.template.toJSON().Resources[logicalId(synth.stack, synth.stack.docRelay.ingestFunction)]
        .Properties.Environment.Variables.NODE_OPTIONS;
    expect([nodeOptions(off), nodeOptions(on)]).toEqual(['--max-old-space-size=200', '--enable-source-maps']);
  });
});
