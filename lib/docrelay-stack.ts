/**
 * The docrelay stack: the DocRelay construct and the outputs an operator needs after `cdk deploy` (the URL to
 * paste into each sender, resource names, how to set created secrets). Environment-agnostic: no lookups.
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { DocRelay, type DocRelayProps } from './docrelay';

/** Props of `DocRelayStack`: the stack's own, and the DocRelay construct's. */
export interface DocRelayStackProps extends StackProps {
  /** Everything the DocRelay construct takes (the config at least). */
  readonly docRelay: DocRelayProps;
}

/** Turns an integration id (`github-releases`) into an output-key part (`GithubReleases`). */
export function outputKeyPart(text: string): string {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter((part) => part !== '')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/** A stack holding one docrelay deployment. */
export class DocRelayStack extends Stack {
  /** The deployment. */
  public readonly docRelay: DocRelay;

  constructor(scope: Construct, id: string, props: DocRelayStackProps) {
    super(scope, id, {
      description: 'docrelay: webhooks to documents in Amazon S3 through the Document Generation Service',
      ...props,
    });
    const relay = new DocRelay(this, 'DocRelay', props.docRelay);
    this.docRelay = relay;

    new CfnOutput(this, 'ApiUrl', {
      value: relay.apiEndpoint,
      description: 'Base URL of the docrelay HTTP API',
    });
    new CfnOutput(this, 'JobsApiUrl', {
      value: `${relay.apiEndpoint}/v1/jobs/{jobId}`,
      description: 'GET a job (IAM-authorized: sign with SigV4, service execute-api)',
    });
    const used = new Set<string>();
    relay.config.integrations.forEach((integration, index) => {
      // An events-only integration (no `verify`) has no webhook URL.
      if (integration.verify === undefined) return;
      let key = `WebhookUrl${outputKeyPart(integration.id)}`;
      // Ids differing only in punctuation (a-b, a_b) would share a key.
      if (used.has(key)) key = `${key}${index}`;
      used.add(key);
      new CfnOutput(this, key, {
        value: relay.webhookUrl(integration.id),
        description: `Webhook URL of integration ${integration.id}: paste it into the sender (POST, application/json)`,
      });
    });
    new CfnOutput(this, 'SecretPrefix', {
      // An empty output value is refused, so a shared (unprefixed) deployment says so in words.
      value: relay.identity.secretPrefix === '' ? '(none)' : relay.identity.secretPrefix,
      description:
        'Prefix of the Secrets Manager name of every secret the config names: the functions read <prefix><name>',
    });
    new CfnOutput(this, 'TableName', { value: relay.table.tableName, description: 'Job and delivery table' });
    new CfnOutput(this, 'BucketName', { value: relay.bucket.bucketName, description: 'Documents bucket' });
    new CfnOutput(this, 'QueueUrl', { value: relay.queue.queueUrl, description: 'Jobs queue' });
    new CfnOutput(this, 'QueueName', { value: relay.queue.queueName, description: 'Jobs queue name' });
    new CfnOutput(this, 'DeadLetterQueueUrl', {
      value: relay.deadLetterQueue.queueUrl,
      description: 'Jobs dead-letter queue (npx docrelay dlq list / dlq redrive)',
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      value: relay.monitoring.alarmTopic.topicArn,
      description: 'Subscribe to it to receive docrelay alarms',
    });
    new CfnOutput(this, 'DashboardUrl', {
      value: `https://console.aws.amazon.com/cloudwatch/home?region=${this.region}#dashboards:name=${relay.monitoring.dashboard.dashboardName}`,
      description: 'CloudWatch dashboard',
    });
    relay.createdSecrets.forEach((secret, index) => {
      const logical = [...relay.configSecrets.entries()].find(([, value]) => value === secret)?.[0] ?? '';
      const name = relay.secretNames.get(logical) ?? logical;
      new CfnOutput(this, `SetSecret${outputKeyPart(logical)}${index}`, {
        value: `aws secretsmanager put-secret-value --secret-id ${name} --secret-string '<value>'`,
        description: `Secret ${name} holds a random placeholder: set its real value with this command`,
      });
    });
  }
}
