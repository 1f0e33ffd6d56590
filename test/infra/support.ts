/** Shared helpers of the infrastructure tests: apps that synthesize fast (bundling skipped) and the test config. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { App, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { loadConfigFileSync } from '../../functions/config/load';
import type { DocrelayConfig } from '../../functions/config/schema';
import { DocRelayStack, type DocRelayStackProps } from '../../lib/docrelay-stack';

// aws-cdk-lib's built-in CloudFormation schema validation costs seconds per synth under Jest; `cdk synth` runs it.
process.env.CDK_VALIDATION = 'false';

/** The repository root. */
export const ROOT = resolve(__dirname, '../..');

/** The test configuration file (test/infra/fixtures/docrelay.yaml). */
export const FIXTURE_CONFIG = join(__dirname, 'fixtures', 'docrelay.yaml');

/** The context of cdk.json (feature flags), so tests synthesize what `cdk synth` does. */
export const CDK_CONTEXT: Record<string, unknown> = JSON.parse(
  readFileSync(join(ROOT, 'cdk.json'), 'utf8'),
).context;

const outdirs: string[] = [];
afterAll(() => {
  for (const dir of outdirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** An app that skips asset bundling (esbuild runs only in the bundle smoke test); its outdir goes afterwards. */
export function testApp(context: Record<string, unknown> = {}): App {
  const outdir = mkdtempSync(join(tmpdir(), 'docrelay-infra-'));
  outdirs.push(outdir);
  return new App({ context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [], ...context }, outdir });
}

/** The validated test configuration. */
export function fixtureConfig(): DocrelayConfig {
  return loadConfigFileSync(FIXTURE_CONFIG).config;
}

/** A docrelay stack on the test config, with the given construct props. */
export function synthStack(
  docRelay: Partial<DocRelayStackProps['docRelay']> = {},
  config: DocrelayConfig = fixtureConfig(),
): { stack: DocRelayStack; template: Template } {
  const stack = new DocRelayStack(testApp(), 'Test', { docRelay: { config, ...docRelay } });
  return { stack, template: Template.fromStack(stack) };
}

/** The logical id of a construct's CloudFormation resource. */
export function logicalId(stack: Stack, construct: { node: { defaultChild?: unknown } }): string {
  const child = construct.node.defaultChild;
  if (child === undefined) throw new Error('construct has no default child');
  return stack.getLogicalId(child as Parameters<Stack['getLogicalId']>[0]);
}

/** Every action a role's policies allow, sorted. */
export function roleActions(template: Template, roleLogicalId: string): string[] {
  const policies = template.findResources('AWS::IAM::Policy');
  const actions = new Set<string>();
  for (const policy of Object.values(policies)) {
    const roles = (policy.Properties.Roles ?? []) as Array<{ Ref?: string }>;
    if (!roles.some((role) => role.Ref === roleLogicalId)) continue;
    for (const statement of policy.Properties.PolicyDocument.Statement as Array<{
      Action: string | string[];
    }>) {
      for (const action of [statement.Action].flat()) actions.add(action);
    }
  }
  return [...actions].sort();
}

/** A policy resource as text: `Fn::Join` flattened, `{ Ref: X }` as `<X>`, `Fn::GetAtt` as `<X.Attr>`. */
export function resourceText(value: unknown): string {
  if (typeof value === 'string') return value;
  const node = value as Record<string, unknown>;
  if (typeof node.Ref === 'string') return `<${node.Ref}>`;
  const getAtt = node['Fn::GetAtt'] as [string, string] | undefined;
  if (getAtt !== undefined) return `<${getAtt[0]}.${getAtt[1]}>`;
  const join = node['Fn::Join'] as [string, unknown[]] | undefined;
  if (join !== undefined) return join[1].map(resourceText).join(join[0]);
  return JSON.stringify(value);
}

/**
 * Every `action resource` pair a role's policies allow (resources as `resourceText`), sorted; only actions
 * starting with `prefix` (e.g. `secretsmanager:`) when given. Throws when no policy names the role.
 */
export function roleGrants(template: Template, roleLogicalId: string, prefix = ''): string[] {
  const pairs = new Set<string>();
  let policies = 0;
  for (const policy of Object.values(template.findResources('AWS::IAM::Policy'))) {
    const roles = (policy.Properties.Roles ?? []) as Array<{ Ref?: string }>;
    if (!roles.some((role) => role.Ref === roleLogicalId)) continue;
    policies += 1;
    for (const statement of policy.Properties.PolicyDocument.Statement as Array<{
      Action: string | string[];
      Resource: unknown;
      Effect: string;
    }>) {
      if (statement.Effect !== 'Allow') continue;
      for (const action of [statement.Action].flat()) {
        if (!action.startsWith(prefix)) continue;
        for (const resource of [statement.Resource].flat()) pairs.add(`${action} ${resourceText(resource)}`);
      }
    }
  }
  if (policies === 0) throw new Error(`no IAM policy names role ${roleLogicalId}`);
  return [...pairs].sort();
}
