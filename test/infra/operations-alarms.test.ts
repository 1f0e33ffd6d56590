/**
 * Outages that page: alarms on the deployment's own metrics (the worker's EMF metrics, under the namespace and
 * service its Powertools publish with), on the job table's indexes and on senders throttled or refused.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { JOB_TABLE } from '../../functions/config/table-contract';
import { logicalId, ROOT, synthStack } from './support';

type AlarmProperties = {
  Threshold: number;
  EvaluationPeriods: number;
  DatapointsToAlarm?: number;
  Period?: number;
  MetricName?: string;
  Namespace?: string;
  Dimensions?: unknown[];
  AlarmDescription: string;
  TreatMissingData: string;
  Metrics?: Array<{
    Id: string;
    Expression?: string;
    ReturnData?: boolean;
    MetricStat?: {
      Metric: { MetricName: string; Namespace: string; Dimensions: unknown[] };
      Period: number;
      Stat: string;
    };
  }>;
};

describe('alarms on the deployment’s own metrics', () => {
  const { stack, template } = synthStack();
  const relay = stack.docRelay;
  const monitoring = relay.monitoring;
  const resources = template.toJSON().Resources;
  const alarmOf = (alarm: { node: { defaultChild?: unknown } }) =>
    resources[logicalId(stack, alarm)].Properties as AlarmProperties;
  const workerEnv = resources[logicalId(stack, relay.workerFunction)].Properties.Environment.Variables;
  const workerSource = readFileSync(join(ROOT, 'functions/handlers/worker/make-handler.ts'), 'utf8');
  const published = (name: string) => workerSource.includes(`addMetric('${name}'`);

  test('ServiceFailing: retries with nothing stored, in 2 of 3 five-minute periods (pages within 15 minutes)', () => {
    const alarm = alarmOf(monitoring.serviceFailingAlarm);
    expect(alarm).toMatchObject({ Threshold: 1, EvaluationPeriods: 3, DatapointsToAlarm: 2 });
    const expression = alarm.Metrics?.find((metric) => metric.ReturnData !== false);
    expect(expression?.Expression).toBe('IF(FILL(stored, 0) == 0, FILL(retries, 0), 0)');
    const stats = Object.fromEntries(
      (alarm.Metrics ?? []).flatMap((metric) =>
        metric.MetricStat === undefined ? [] : [[metric.Id, metric.MetricStat]],
      ),
    );
    const own = {
      Namespace: workerEnv.POWERTOOLS_METRICS_NAMESPACE,
      Dimensions: [{ Name: 'service', Value: workerEnv.POWERTOOLS_SERVICE_NAME }],
    };
    expect(own).toEqual({
      Namespace: 'docrelay/Test',
      Dimensions: [{ Name: 'service', Value: 'Test-worker' }],
    });
    expect(stats.retries).toEqual({ Metric: { MetricName: 'JobRetries', ...own }, Period: 300, Stat: 'Sum' });
    expect(stats.stored).toEqual({ Metric: { MetricName: 'JobsStored', ...own }, Period: 300, Stat: 'Sum' });
    expect(300 * alarm.EvaluationPeriods).toBeLessThanOrEqual(15 * 60);
    // The names the worker publishes: a renamed metric would leave the alarm reading nothing.
    expect(['JobRetries', 'JobsStored', 'WorkerErrors'].filter((name) => !published(name))).toEqual([]);
  });

  test('WorkerFailures: the worker’s own WorkerErrors (Lambda Errors stay 0: failures are batch item failures)', () => {
    expect(alarmOf(monitoring.workerFailuresAlarm)).toMatchObject({
      MetricName: 'WorkerErrors',
      Namespace: 'docrelay/Test',
      Dimensions: [{ Name: 'service', Value: 'Test-worker' }],
      Threshold: 1,
      Period: 300,
    });
  });

  test('IndexThrottles: read and write throttles of every GSI of the job table', () => {
    const alarm = alarmOf(monitoring.indexThrottlesAlarm!);
    const indexes = new Set<string>();
    const metricNames = new Set<string>();
    for (const metric of alarm.Metrics ?? []) {
      if (metric.MetricStat === undefined) continue;
      const dimensions = metric.MetricStat.Metric.Dimensions as Array<{ Name: string; Value: unknown }>;
      expect(dimensions.find((d) => d.Name === 'TableName')?.Value).toEqual({
        Ref: logicalId(stack, relay.table),
      });
      indexes.add(String(dimensions.find((d) => d.Name === 'GlobalSecondaryIndexName')?.Value));
      metricNames.add(metric.MetricStat.Metric.MetricName);
    }
    expect([...indexes].sort()).toEqual(
      [JOB_TABLE.openJobsIndex, JOB_TABLE.jobsByTimeIndex, JOB_TABLE.byDeliveryIndex].sort(),
    );
    expect([...metricNames].sort()).toEqual(['ReadThrottleEvents', 'WriteThrottleEvents']);
    expect(alarm.Metrics?.filter((metric) => metric.MetricStat !== undefined)).toHaveLength(6);
  });

  test('ApiThrottled: 429 answers counted from the API’s access logs into the deployment’s namespace', () => {
    template.hasResourceProperties('AWS::Logs::MetricFilter', {
      LogGroupName: { Ref: logicalId(stack, relay.accessLogGroup) },
      FilterPattern: '{ $.status = "429" }',
      MetricTransformations: [
        { MetricNamespace: 'docrelay/Test', MetricName: 'ApiThrottled', MetricValue: '1' },
      ],
    });
    expect(alarmOf(monitoring.apiThrottledAlarm)).toMatchObject({
      MetricName: 'ApiThrottled',
      Namespace: 'docrelay/Test',
      Threshold: 1,
    });
    const dashboard = JSON.stringify(Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0]);
    expect(dashboard).toContain('\\"docrelay/Test\\",\\"ApiThrottled\\"');
    // The access log writes the status this filter reads.
    const stage = Object.values(template.findResources('AWS::ApiGatewayV2::Stage'));
    expect(stage).toHaveLength(1);
    expect(JSON.parse(stage[0]!.Properties.AccessLogSettings.Format).status).toBe('$context.status');
  });

  test('Api4xx: half the requests answered 4xx through 15 minutes, counted only from 20 requests', () => {
    const alarm = alarmOf(monitoring.api4xxAlarm);
    expect(alarm).toMatchObject({ Threshold: 50, EvaluationPeriods: 3, DatapointsToAlarm: 3 });
    expect(alarm.Metrics?.find((metric) => metric.ReturnData !== false)?.Expression).toBe(
      'IF(FILL(requests, 0) >= 20, 100 * FILL(errors, 0) / requests, 0)',
    );
  });

  test('every alarm names its runbook in docs/operations.md, which has a section for it', () => {
    const runbook = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    expect(monitoring.alarms.length).toBeGreaterThanOrEqual(15);
    for (const alarm of monitoring.alarms) {
      const { AlarmDescription } = alarmOf(alarm);
      const name = /Runbook: docs\/operations\.md, (\w+)\.$/.exec(AlarmDescription)?.[1];
      expect(name).toBe(alarm.node.id);
      expect(runbook).toContain(`### ${name}`);
    }
  });

  test('thresholds come from props', () => {
    const tuned = synthStack({ alarmThresholds: { failedAttempts: 5, apiThrottled: 20, api4xxPercent: 80 } });
    const tunedResources = tuned.template.toJSON().Resources;
    const threshold = (alarm: { node: { defaultChild?: unknown } }) =>
      tunedResources[logicalId(tuned.stack, alarm)].Properties.Threshold;
    const m = tuned.stack.docRelay.monitoring;
    expect([
      threshold(m.serviceFailingAlarm),
      threshold(m.apiThrottledAlarm),
      threshold(m.api4xxAlarm),
    ]).toEqual([5, 20, 80]);
  });
});
