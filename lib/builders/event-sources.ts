/** EventBridge: one rule per integration that takes events, and the reconciler's schedule. */
import { Duration } from 'aws-cdk-lib';
import {
  EventField,
  type EventPattern,
  type IEventBus,
  Rule,
  RuleTargetInput,
  Schedule,
} from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { DocrelayConfig } from '../../functions/config/schema';

/** Inputs of `buildEventRules`. */
export interface EventRulesOptions {
  readonly config: DocrelayConfig;
  readonly eventIngestFunction: IFunction;
  readonly deadLetterQueue: IQueue;
  readonly eventBus?: IEventBus;
}

/**
 * One rule per integration with `eventBridge.eventPattern`, by integration id: the event reaches event-ingest
 * wrapped with its integration id; after EventBridge's retries it lands in the events dead-letter queue.
 */
export function buildEventRules(scope: Construct, options: EventRulesOptions): Map<string, Rule> {
  const rules = new Map<string, Rule>();
  for (const integration of options.config.integrations) {
    if (integration.eventBridge === undefined) continue;
    const rule = new Rule(scope, `EventRule-${integration.id}`, {
      description: `docrelay: events that become deliveries of integration ${integration.id}`,
      ...(options.eventBus === undefined ? {} : { eventBus: options.eventBus }),
      // The config's pattern is EventBridge's own JSON (e.g. detail-type), passed through as written.
      eventPattern: integration.eventBridge.eventPattern as EventPattern,
    });
    rule.addTarget(
      new LambdaFunction(options.eventIngestFunction, {
        event: RuleTargetInput.fromObject({ integrationId: integration.id, event: EventField.fromPath('$') }),
        deadLetterQueue: options.deadLetterQueue,
        retryAttempts: 8,
        maxEventAge: Duration.hours(24),
      }),
    );
    rules.set(integration.id, rule);
  }
  return rules;
}

/** The reconciler's schedule. */
export function buildReconcileSchedule(scope: Construct, reconciler: IFunction, every: Duration): Rule {
  return new Rule(scope, 'ReconcileSchedule', {
    description: 'docrelay: re-sends jobs whose message was lost or whose worker died',
    schedule: Schedule.rate(every),
    targets: [new LambdaFunction(reconciler, { retryAttempts: 0 })],
  });
}
