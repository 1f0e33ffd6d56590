/** The HTTP API's optional custom domain, and the dead-letter queue's escape hatch. */
import { Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { HostedZone } from 'aws-cdk-lib/aws-route53';
import { DocRelay } from '../../../lib/docrelay';
import { DocRelayStack } from '../../../lib/docrelay-stack';
import { fixtureConfig, logicalId, testApp } from '../support';

describe('custom domain', () => {
  const stack = new Stack(testApp(), 'Domain');
  const zone = new HostedZone(stack, 'Zone', { zoneName: 'example.com' });
  const certificate = Certificate.fromCertificateArn(
    stack,
    'Cert',
    'arn:aws:acm:eu-west-1:123456789012:certificate/00000000-0000-0000-0000-000000000000',
  );
  const relay = new DocRelay(stack, 'Relay', {
    config: fixtureConfig(),
    domain: { domainName: 'hooks.example.com', certificate, hostedZone: zone },
    apiProps: { disableExecuteApiEndpoint: true },
  });
  const template = Template.fromStack(stack);

  test('webhook URLs use the domain, mapped to the stage, with an alias record in the zone', () => {
    expect(relay.webhookUrl('github-releases')).toBe('https://hooks.example.com/v1/hooks/github-releases');
    template.hasResourceProperties('AWS::ApiGatewayV2::DomainName', { DomainName: 'hooks.example.com' });
    template.hasResourceProperties('AWS::ApiGatewayV2::ApiMapping', {
      ApiId: { Ref: logicalId(stack, relay.api) },
      Stage: '$default',
    });
    template.hasResourceProperties('AWS::Route53::RecordSet', {
      Name: 'hooks.example.com.',
      Type: 'A',
      HostedZoneId: { Ref: logicalId(stack, zone) },
    });
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { DisableExecuteApiEndpoint: true });
  });

  test('the stack outputs use the domain', () => {
    const app = testApp();
    const domainStack = new DocRelayStack(app, 'WithDomain', {
      docRelay: {
        config: fixtureConfig(),
        domain: {
          domainName: 'docs.example.org',
          certificate: Certificate.fromCertificateArn(
            new Stack(app, 'Certs'),
            'Cert',
            'arn:aws:acm:eu-west-1:123456789012:certificate/00000000-0000-0000-0000-000000000001',
          ),
        },
      },
    });
    const outputs = Template.fromStack(domainStack).toJSON().Outputs;
    expect(outputs.ApiUrl.Value).toBe('https://docs.example.org');
    expect(outputs.WebhookUrlStripeInvoices.Value).toBe('https://docs.example.org/v1/hooks/stripe_invoices');
  });

  test('disableExecuteApiEndpoint without a domain fails synth', () => {
    const bare = new Stack(testApp(), 'Bare');
    expect(
      () =>
        new DocRelay(bare, 'Relay', {
          config: fixtureConfig(),
          apiProps: { disableExecuteApiEndpoint: true },
        }),
    ).toThrow(/disableExecuteApiEndpoint needs a custom domain/);
  });
});

test('deadLetterQueueProps reach the jobs dead-letter queue, under its encryption', () => {
  const stack = new Stack(testApp(), 'Dlq');
  const relay = new DocRelay(stack, 'Relay', {
    config: fixtureConfig(),
    deadLetterQueueProps: { retentionPeriod: Duration.days(4) },
  });
  expect(
    Template.fromStack(stack).toJSON().Resources[logicalId(stack, relay.deadLetterQueue)].Properties,
  ).toMatchObject({ MessageRetentionPeriod: 345_600, SqsManagedSseEnabled: true });
});
