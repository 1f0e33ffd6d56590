/**
 * Stages apart: two deployments of one config in one account, default props, read and write no common secret
 * (every config secret carries the deployment's prefix, in the bundled config and in every grant), and every
 * event says which deployment sent it. `secretPrefix: ''` shares secrets on purpose.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { Template as Synth } from 'aws-cdk-lib/assertions';
import { LAMBDA_ENV } from '../../functions/config/lambda-env';
import { addDocRelayStack, appOptionsFromContext } from '../../lib/docrelay-app';
import { DocRelayStack } from '../../lib/docrelay-stack';
import {
  FIXTURE_CONFIG,
  fixtureConfig,
  logicalId,
  resourceText,
  roleGrants,
  synthStack,
  testApp,
} from './support';

/** Every secret ARN (or pattern) any role of the template may act on, with the action. */
function secretGrants(template: Template): string[] {
  const roles = Object.keys(template.findResources('AWS::IAM::Role'));
  expect(roles.length).toBeGreaterThanOrEqual(5);
  return roles.flatMap((role) => {
    try {
      return roleGrants(template, role, 'secretsmanager:');
    } catch {
      return [];
    }
  });
}

/**
 * The secrets of the grants: names as ARNs; a reference (`<LogicalId>`) is a resource of its own stack, so it
 * is qualified with the stack's name (two stacks' equal logical ids are two secrets).
 */
const secretResources = (stackName: string, grants: string[]) =>
  grants.map((grant) => {
    const resource = grant.split(' ')[1]!;
    return resource.startsWith('<') && !resource.startsWith('<AWS::') ? `${stackName}:${resource}` : resource;
  });

describe('two deployments of one config with default props', () => {
  const app = testApp();
  const config = fixtureConfig();
  const prod = new DocRelayStack(app, 'DocRelay-prod', { docRelay: { config } });
  const staging = new DocRelayStack(app, 'DocRelay-staging', { docRelay: { config } });
  const [prodTemplate, stagingTemplate] = [Synth.fromStack(prod), Synth.fromStack(staging)];

  test('no secret one deployment may read or write is one the other may', () => {
    const one = secretGrants(prodTemplate);
    const two = secretGrants(stagingTemplate);
    // ingest: 3 webhook secrets + sealing; worker: API key + sealing; event-ingest: sealing.
    expect(one.length).toBeGreaterThanOrEqual(7);
    const theirs = secretResources('DocRelay-staging', two);
    expect(secretResources('DocRelay-prod', one).filter((resource) => theirs.includes(resource))).toEqual([]);
    // The sealing secrets are each stack's own resource; the config's are named with the stack's prefix.
    for (const resource of secretResources('DocRelay-prod', one)) {
      expect(resource).toMatch(/:secret:DocRelay-prod\/test\/|^DocRelay-prod:<DocRelaySealingSecret/);
    }
  });

  test('the functions look the secrets up by the prefixed names they are granted', () => {
    for (const [stack, prefix] of [
      [prod, 'DocRelay-prod/'],
      [staging, 'DocRelay-staging/'],
    ] as const) {
      const bundled = require(stack.docRelay.configFile) as ReturnType<typeof fixtureConfig>;
      expect(bundled.service.apiKeySecret).toBe(`${prefix}test/service-api-key`);
      expect(bundled.integrations.map((i) => i.verify?.secret)).toEqual([
        [`${prefix}test/github-webhook`, `${prefix}test/github-webhook-next`],
        `${prefix}test/stripe-webhook`,
        undefined,
      ]);
    }
  });

  test('each stack outputs its secret prefix, for the CLI and for operators', () => {
    expect([prodTemplate, stagingTemplate].map((t) => t.toJSON().Outputs.SecretPrefix.Value)).toEqual([
      'DocRelay-prod/',
      'DocRelay-staging/',
    ]);
  });

  test('each worker names its deployment in the events it publishes', () => {
    const env = (stack: DocRelayStack, template: Template) =>
      template.toJSON().Resources[logicalId(stack, stack.docRelay.workerFunction)].Properties.Environment
        .Variables[LAMBDA_ENV.deployment];
    expect([env(prod, prodTemplate), env(staging, stagingTemplate)]).toEqual([
      'DocRelay-prod',
      'DocRelay-staging',
    ]);
  });
});

describe('the Asana handshake’s PutSecretValue', () => {
  test('touches only the integration’s own secret of its own deployment', () => {
    const config = fixtureConfig();
    const asana = {
      ...config,
      integrations: [
        ...config.integrations,
        {
          ...config.integrations[1]!,
          id: 'asana-tasks',
          verify: { scheme: 'asana', secret: 'test/asana-hook' },
        },
      ],
    } as typeof config;
    const { stack, template } = synthStack({}, asana);
    expect(
      roleGrants(
        template,
        logicalId(stack, stack.docRelay.ingestFunction.executionRole),
        'secretsmanager:Put',
      ),
    ).toEqual([
      'secretsmanager:PutSecretValue arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:Test/test/asana-hook-??????',
    ]);
  });
});

describe('secretPrefix', () => {
  test("'' imports the config's names as they are, for secrets shared on purpose", () => {
    const { stack, template } = synthStack({ secretPrefix: '' });
    expect(stack.docRelay.secretNames.get('test/stripe-webhook')).toBe('test/stripe-webhook');
    const grants = roleGrants(
      template,
      logicalId(stack, stack.docRelay.ingestFunction.executionRole),
      'secretsmanager:',
    );
    expect(grants.map((grant) => resourceText(grant.split(' ')[1]))).toContain(
      'arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:test/stripe-webhook-??????',
    );
  });

  test('a prefix of its own names created secrets too; characters Secrets Manager refuses fail synth', () => {
    const { stack } = synthStack({ secretPrefix: 'prod/docrelay/', createSecrets: true });
    expect(stack.docRelay.secretNames.get('test/service-api-key')).toBe('prod/docrelay/test/service-api-key');
    expect(() => synthStack({ secretPrefix: 'prod docrelay/' })).toThrow(
      /secretPrefix must be known at synth/,
    );
  });
});

describe('the CDK app’s context', () => {
  test('-c sharedSecrets=true and -c omitTableIndexes=a,b reach the construct', () => {
    const app = testApp({ sharedSecrets: 'true', omitTableIndexes: 'by-delivery, jobs-by-time' });
    const options = appOptionsFromContext(app);
    expect(options).toMatchObject({ sharedSecrets: true, omitTableIndexes: ['by-delivery', 'jobs-by-time'] });
    const stack = addDocRelayStack(app, { ...options, configPath: FIXTURE_CONFIG });
    expect(stack.docRelay.identity.secretPrefix).toBe('');
    const [table] = Object.values(Synth.fromStack(stack).findResources('AWS::DynamoDB::Table'));
    expect(table!.Properties.GlobalSecondaryIndexes.map((i: { IndexName: string }) => i.IndexName)).toEqual([
      'open-jobs',
    ]);
  });

  test('without them, the stack’s name prefixes the secrets and every index is there', () => {
    const app = testApp();
    const stack = addDocRelayStack(app, { ...appOptionsFromContext(app), configPath: FIXTURE_CONFIG });
    expect(stack.docRelay.identity.secretPrefix).toBe('DocRelay/');
    const [table] = Object.values(Synth.fromStack(stack).findResources('AWS::DynamoDB::Table'));
    expect(table!.Properties.GlobalSecondaryIndexes).toHaveLength(3);
  });
});
