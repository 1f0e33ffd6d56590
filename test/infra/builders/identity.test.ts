/** Two deployments in one account: every name and the metric identity derive from the deployment. */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { DocRelay } from '../../../lib/docrelay';
import { DocRelayStack } from '../../../lib/docrelay-stack';
import { fixtureConfig, testApp } from '../support';

/** What must differ between deployments: API name, created secret names, metric namespace and services. */
function identityOf(template: Template): string[] {
  const names: string[] = [];
  for (const api of Object.values(template.findResources('AWS::ApiGatewayV2::Api')))
    names.push(api.Properties.Name);
  for (const secret of Object.values(template.findResources('AWS::SecretsManager::Secret'))) {
    if (secret.Properties.Name !== undefined) names.push(secret.Properties.Name);
  }
  for (const fn of Object.values(template.findResources('AWS::Lambda::Function'))) {
    const env = fn.Properties.Environment.Variables;
    names.push(env.POWERTOOLS_METRICS_NAMESPACE, env.POWERTOOLS_SERVICE_NAME);
  }
  expect(names.length).toBeGreaterThan(0);
  const dashboard = JSON.stringify(Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0]);
  names.push(...[...dashboard.matchAll(/docrelay\/[A-Za-z0-9-]+/g)].map((match) => match[0]));
  return [...new Set(names)];
}

describe('deployment identity', () => {
  const app = testApp();
  const config = fixtureConfig();
  const prod = new DocRelayStack(app, 'DocRelay-prod', { docRelay: { config, createSecrets: true } });
  const staging = new DocRelayStack(app, 'DocRelay-staging', { docRelay: { config, createSecrets: true } });
  const [one, two] = [identityOf(Template.fromStack(prod)), identityOf(Template.fromStack(staging))];

  test('two stacks in one account share no API name, created secret name or metric identity', () => {
    expect(one.length).toBeGreaterThan(8);
    expect(one.filter((name) => two.includes(name))).toEqual([]);
  });

  test('the names derive from the stack name', () => {
    expect(one).toEqual(
      expect.arrayContaining([
        'DocRelay-prod',
        'DocRelay-prod/test/github-webhook',
        'docrelay/DocRelay-prod',
        'DocRelay-prod-worker',
      ]),
    );
    expect(prod.docRelay.identity.metricsNamespace).toBe('docrelay/DocRelay-prod');
  });

  test('the functions’ bundled config names the created secrets by their prefixed names', () => {
    const bundled = require(prod.docRelay.configFile) as ReturnType<typeof fixtureConfig>;
    expect(bundled.service.apiKeySecret).toBe('DocRelay-prod/test/service-api-key');
    expect(bundled.integrations[0]?.verify?.secret).toEqual([
      'DocRelay-prod/test/github-webhook',
      'DocRelay-prod/test/github-webhook-next',
    ]);
    // The construct's own view keeps the config's logical names.
    expect(prod.docRelay.config.service.apiKeySecret).toBe('test/service-api-key');
  });

  test('two DocRelay constructs in one stack need distinct deployment names', () => {
    const stack = new Stack(testApp(), 'Both');
    new DocRelay(stack, 'A', { config });
    expect(() => new DocRelay(stack, 'B', { config })).toThrow(/deployment name Both is already used/);
    expect(() => new DocRelay(stack, 'C', { config, deploymentName: 'Both-c' })).not.toThrow();
  });

  test('a secret given as a construct is used, and named in the bundled config by its name', () => {
    const stack = new Stack(new App(), 'Given');
    const apiKey = new Secret(stack, 'ApiKey', { secretName: 'platform/docgen-key' });
    const relay = new DocRelay(stack, 'Relay', { config, secrets: { 'test/service-api-key': apiKey } });
    expect(relay.serviceApiKeySecret).toBe(apiKey);
    expect((require(relay.configFile) as typeof config).service.apiKeySecret).toBe('platform/docgen-key');
    const unnamed = new Secret(stack, 'Unnamed');
    expect(
      () =>
        new DocRelay(stack, 'Other', {
          config,
          deploymentName: 'x',
          secrets: { 'test/service-api-key': unnamed },
        }),
    ).toThrow(/must have a name known at synth/);
    expect(
      () => new DocRelay(stack, 'Typo', { config, deploymentName: 'y', secrets: { nope: apiKey } }),
    ).toThrow(/secrets.nope is not a secret name the config uses/);
  });
});
