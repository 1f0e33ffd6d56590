/**
 * A small, reviewable snapshot of what a deployment is made of: resource counts, routes, function settings,
 * queue, table, rules and alarms. Asset hashes are normalised; the full template is not snapshotted (the
 * fine-grained assertions say what matters). Logical ids are kept: a changed one means a replaced resource.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { synthStack } from './support';

type Resources = Record<string, { Type: string; Properties?: Record<string, unknown> }>;

const ASSET_HASH = /[0-9a-f]{64}/g;

/** The parts of the template a reviewer should see change. */
function summarize(template: Template): unknown {
  const resources = template.toJSON().Resources as Resources;
  const ofType = (type: string) =>
    Object.entries(resources)
      .filter(([, resource]) => resource.Type === type)
      .map(([logicalId, resource]): Record<string, unknown> => ({ logicalId, ...resource.Properties }));
  const counts: Record<string, number> = {};
  for (const resource of Object.values(resources)) counts[resource.Type] = (counts[resource.Type] ?? 0) + 1;
  const summary = {
    resources: Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b))),
    routes: ofType('AWS::ApiGatewayV2::Route').map((r) => [r.RouteKey, r.AuthorizationType]),
    stage: ofType('AWS::ApiGatewayV2::Stage').map((s) => ({
      StageName: s.StageName,
      ...(s.DefaultRouteSettings as object),
    })),
    functions: ofType('AWS::Lambda::Function').map((f) => ({
      logicalId: f.logicalId,
      settings: [
        f.Runtime,
        f.Architectures,
        f.MemorySize,
        f.Timeout,
        f.Handler,
        f.ReservedConcurrentExecutions,
      ],
      environment: Object.keys((f.Environment as { Variables: object }).Variables),
      code: f.Code,
    })),
    queues: ofType('AWS::SQS::Queue').map(
      ({ logicalId, VisibilityTimeout, MessageRetentionPeriod, RedrivePolicy }) => ({
        logicalId,
        VisibilityTimeout,
        MessageRetentionPeriod,
        maxReceiveCount: (RedrivePolicy as { maxReceiveCount?: number } | undefined)?.maxReceiveCount,
      }),
    ),
    eventSources: ofType('AWS::Lambda::EventSourceMapping').map(
      ({ BatchSize, FunctionResponseTypes, ScalingConfig }) => ({
        BatchSize,
        FunctionResponseTypes,
        ScalingConfig,
      }),
    ),
    tables: ofType('AWS::DynamoDB::Table').map(
      ({ logicalId, KeySchema, GlobalSecondaryIndexes, TimeToLiveSpecification }) => ({
        logicalId,
        KeySchema,
        GlobalSecondaryIndexes,
        TimeToLiveSpecification,
      }),
    ),
    rules: ofType('AWS::Events::Rule').map((r) => ({
      logicalId: r.logicalId,
      trigger: r.EventPattern ?? r.ScheduleExpression,
      input: (r.Targets as Array<{ InputTransformer?: unknown }>)[0]?.InputTransformer,
    })),
    alarms: ofType('AWS::CloudWatch::Alarm').map((a) => [
      a.logicalId,
      a.Namespace,
      a.MetricName,
      a.Threshold,
    ]),
    outputs: Object.keys(template.toJSON().Outputs as object),
  };
  return JSON.parse(JSON.stringify(summary).replace(ASSET_HASH, '<asset-hash>'));
}

test('the deployment summary matches the reviewed snapshot', () => {
  const { template } = synthStack();
  expect(summarize(template)).toMatchSnapshot();
});
