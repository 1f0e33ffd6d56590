/** cdk-nag's AwsSolutions pack as a test: no unacknowledged finding, and every acknowledgment is needed and explained. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type App, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { Vpc } from 'aws-cdk-lib/aws-ec2';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { DocRelay } from '../../lib/docrelay';
import { addDocRelayStack } from '../../lib/docrelay-app';
import { DocRelayStack } from '../../lib/docrelay-stack';
import { FIXTURE_CONFIG, fixtureConfig, ROOT, testApp } from './support';

const ACKNOWLEDGED = Validations.ACKNOWLEDGED_RULES_METADATA_KEY;

/** Unacknowledged findings as `rule @ path` lines (readable when the test fails). */
function findings(scope: IConstruct, checks = new AwsSolutionsChecks()): string[] {
  const report = checks.validateScope(scope);
  return report.violations.flatMap((violation) =>
    violation.violatingResources.map((resource) => `${violation.ruleName} @ ${resource.constructPath}`),
  );
}

/** Every acknowledgment in the tree: the construct it sits on, the rule id and the reason. */
function acknowledgments(scope: IConstruct): Array<{ path: string; id: string; reason: string }> {
  return scope.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === ACKNOWLEDGED)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
          path: construct.node.path,
          id: id.replace(/^annotation::/i, ''),
          reason,
        })),
      ),
  );
}

/** A stack with docrelay and a customer managed key (the key must exist before the construct). */
class KeyedStack extends Stack {
  constructor(scope: App, id: string, props?: StackProps) {
    super(scope, id, props);
    const key = new Key(this, 'Key', { enableKeyRotation: true });
    new DocRelay(this, 'DocRelay', { config: fixtureConfig(), encryptionKey: key, createSecrets: true });
  }
}

/** A stack with the worker in a VPC (its network interface actions acknowledged only then), traced too. */
class VpcStack extends Stack {
  constructor(scope: App, id: string) {
    super(scope, id);
    const vpc = new Vpc(this, 'Vpc', { maxAzs: 2, natGateways: 1 });
    // The caller's VPC, not docrelay's: its flow logs are the caller's to choose.
    Validations.of(vpc).acknowledge({
      id: 'AwsSolutions-VPC7',
      reason: 'A test VPC standing for the caller’s own network, whose flow logs are not docrelay’s concern.',
    });
    new DocRelay(this, 'DocRelay', {
      config: fixtureConfig(),
      tracing: true,
      functions: { worker: { vpc } },
    });
  }
}

/** A stack that brings its own event bus and alarm topic key but lets docrelay create the rest. */
class OwnBusStack extends Stack {
  constructor(scope: App, id: string) {
    super(scope, id);
    new DocRelay(this, 'DocRelay', { config: fixtureConfig(), eventBus: new EventBus(this, 'Bus') });
  }
}

describe('cdk-nag AwsSolutions', () => {
  const variants: Array<[string, () => Stack]> = [
    [
      'the app on config/docrelay.yaml (what `cdk synth` builds)',
      () => addDocRelayStack(testApp(), { cwd: ROOT }),
    ],
    [
      'the test config with defaults',
      () => new DocRelayStack(testApp(), 'Defaults', { docRelay: { config: fixtureConfig() } }),
    ],
    ['a customer managed key and created secrets', () => new KeyedStack(testApp(), 'Keyed')],
    ['an own event bus', () => new OwnBusStack(testApp(), 'OwnBus')],
    [
      'X-Ray tracing on (its wildcard acknowledged only then)',
      () => new DocRelayStack(testApp(), 'Traced', { docRelay: { config: fixtureConfig(), tracing: true } }),
    ],
    ['the worker in a VPC, with tracing', () => new VpcStack(testApp(), 'InVpc')],
  ];

  test.each(variants)('%s has no unacknowledged finding', (_name, build) => {
    expect(findings(build())).toEqual([]);
  });

  test('synth with the pack registered as a validation plugin succeeds and reports nothing (as `cdk synth` runs it)', () => {
    const app = testApp();
    addDocRelayStack(app, { cwd: ROOT, configPath: FIXTURE_CONFIG });
    const assembly = app.synth();
    const report = JSON.parse(readFileSync(join(assembly.directory, 'validation-report.json'), 'utf8')) as {
      pluginReports: Array<{ pluginName: string; violations: unknown[] }>;
    };
    expect(report.pluginReports.filter((plugin) => plugin.violations.length > 0)).toEqual([]);
  });

  test('the pack is not vacuous: a bucket without logging or TLS is reported and fails synth', () => {
    const app = testApp();
    const stack = addDocRelayStack(app, { cwd: ROOT, configPath: FIXTURE_CONFIG });
    new Bucket(stack, 'Careless');
    expect(findings(stack)).toEqual([
      `AwsSolutions-S1 @ ${stack.stackName}/Careless/Resource`,
      `AwsSolutions-S10 @ ${stack.stackName}/Careless/Resource`,
    ]);
    const log = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(() => app.synth()).toThrow(/AwsSolutions-S10/);
    } finally {
      log.mockRestore();
    }
  });

  test('every acknowledgment matches a real finding on or under the construct it sits on, with a reason', () => {
    for (const [, build] of variants) {
      const stack = build();
      // The same pack, blind to acknowledgments: what it reports is everything there is to acknowledge.
      const blind = new AwsSolutionsChecks();
      Object.defineProperty(blind, 'isAcknowledged', { value: () => false });
      const all = blind.validateScope(stack).violations.flatMap((violation) =>
        violation.violatingResources.map((resource) => ({
          id: violation.ruleName,
          path: resource.constructPath ?? '',
        })),
      );
      const ours = acknowledgments(stack).filter((ack) => ack.id.startsWith('AwsSolutions-'));
      expect(ours.length).toBeGreaterThan(0);
      for (const ack of ours) {
        const matched = all.some(
          (finding) => finding.id === ack.id && finding.path.startsWith(`${ack.path}/`),
        );
        expect([ack.path, ack.id, matched]).toEqual([ack.path, ack.id, true]);
        // A reason a reviewer can weigh: a sentence, not a placeholder.
        expect(ack.reason.length).toBeGreaterThan(60);
      }
    }
  });

  test('deploy.md lists every acknowledgment: a row per rule, and each acknowledged queue by its name', () => {
    const table = readFileSync(join(ROOT, 'docs', 'deploy.md'), 'utf8')
      .split('\n')
      .filter((line) => /^\| [A-Z]+\d+ /.test(line));
    for (const [, build] of variants) {
      // docrelay's own, not the test's (VPC7 on the test VPC).
      const ours = acknowledgments(build()).filter(
        (a) => a.id.startsWith('AwsSolutions-') && a.path.split('/').includes('DocRelay'),
      );
      for (const ack of ours) {
        const rule = ack.id.replace(/^AwsSolutions-/, '').replace(/\[.*$/, '');
        const rows = table.filter((line) => line.startsWith(`| ${rule} `));
        expect([ack.id, rows.length > 0]).toEqual([ack.id, true]);
        if (rule === 'SQS3') {
          const queue = ack.path.split('/').at(-1)!;
          expect([queue, rows.some((line) => line.includes(`\`${queue}\``))]).toEqual([queue, true]);
        }
      }
    }
  });

  test('the acknowledgment reasons hold for every verify scheme and for who can read the sealing secret', () => {
    const stack = new DocRelayStack(testApp(), 'Reasons', { docRelay: { config: fixtureConfig() } });
    const reason = (id: string) => acknowledgments(stack).find((ack) => ack.id === id)?.reason ?? '';
    // Signatures, tokens and no verification at all (allowUnsigned) are all possible schemes.
    expect(reason('AwsSolutions-APIG4')).toMatch(/HMAC.*public-key.*token.*none.*allowUnsigned: true/s);
    expect(reason('AwsSolutions-APIG4')).not.toMatch(/each delivery is authenticated by its HMAC/);
    const sealing = acknowledgments(stack).find(
      (ack) => ack.id === 'AwsSolutions-SMG4' && ack.path.endsWith('/SealingSecret'),
    );
    expect(sealing?.reason).toMatch(/no resource policy.*docrelay console/s);
    expect(sealing?.reason).not.toMatch(/readable only by/);
  });
});
