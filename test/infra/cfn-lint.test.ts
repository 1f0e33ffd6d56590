/**
 * cfn-lint over every synthesized variant: no errors, and no warning beyond those listed with their reason.
 * Skipped, saying so, where cfn-lint is not installed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { Vpc } from 'aws-cdk-lib/aws-ec2';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { Key } from 'aws-cdk-lib/aws-kms';
import { HostedZone } from 'aws-cdk-lib/aws-route53';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { DocRelay } from '../../lib/docrelay';
import { addDocRelayStack } from '../../lib/docrelay-app';
import { DocRelayStack } from '../../lib/docrelay-stack';
import { fixtureConfig, ROOT, testApp } from './support';

/** Warnings accepted, each with why. */
const ACCEPTED_WARNINGS: Record<string, string> = {
  W3005:
    'aws-cdk-lib makes each function (and the API domain mapping) DependsOn its role (domain) although a GetAtt/Ref already orders them: a redundant DependsOn the CDK writes, harmless to CloudFormation.',
};

const available = spawnSync('cfn-lint', ['--version']).status === 0;
if (!available) process.stderr.write('cfn-lint is not installed: the cfn-lint tests are skipped\n');

const variants: Array<[string, () => Stack]> = [
  ['the app on config/docrelay.yaml', () => addDocRelayStack(testApp(), { cwd: ROOT })],
  ['defaults', () => new DocRelayStack(testApp(), 'Defaults', { docRelay: { config: fixtureConfig() } })],
  [
    'a customer key, created secrets and an own bus',
    () => {
      const stack = new Stack(testApp(), 'Keyed');
      const key = new Key(stack, 'Key', { enableKeyRotation: true });
      new DocRelay(stack, 'DocRelay', {
        config: fixtureConfig(),
        encryptionKey: key,
        createSecrets: true,
        eventBus: new EventBus(stack, 'Bus'),
      });
      return stack;
    },
  ],
  [
    'a custom domain',
    () => {
      const stack = new Stack(testApp(), 'Domain');
      new DocRelay(stack, 'DocRelay', {
        config: fixtureConfig(),
        domain: {
          domainName: 'hooks.example.com',
          certificate: Certificate.fromCertificateArn(
            stack,
            'Cert',
            'arn:aws:acm:eu-west-1:123456789012:certificate/00000000-0000-0000-0000-000000000000',
          ),
          hostedZone: new HostedZone(stack, 'Zone', { zoneName: 'example.com' }),
        },
      });
      return stack;
    },
  ],
  [
    'the worker in a VPC, service.maxConcurrency 1 (a reserved execution) and a brought bucket with its key',
    () => {
      const stack = new Stack(testApp(), 'VpcSingle');
      const config = fixtureConfig();
      new DocRelay(stack, 'DocRelay', {
        config: { ...config, service: { ...config.service, maxConcurrency: 1 } },
        functions: { worker: { vpc: new Vpc(stack, 'Vpc', { maxAzs: 2, natGateways: 1 }) } },
        bucket: {
          existing: Bucket.fromBucketName(stack, 'Docs', 'my-documents'),
          encryptionKey: new Key(stack, 'DocsKey', { enableKeyRotation: true }),
        },
      });
      return stack;
    },
  ],
];

(available ? describe : describe.skip)('cfn-lint', () => {
  test.each(variants)('%s: no errors, no unlisted warnings', (_name, build) => {
    const stack = build();
    const file = join(
      stack.node.root.node.tryGetContext('outdir') ?? testApp().outdir,
      `${stack.stackName}.lint.json`,
    );
    writeFileSync(file, JSON.stringify(Template.fromStack(stack).toJSON()));
    let output = '[]';
    try {
      output = execFileSync('cfn-lint', ['--format', 'json', '--regions', 'eu-west-1', '--', file], {
        encoding: 'utf8',
      });
    } catch (error) {
      // cfn-lint exits non-zero when it reports anything; the report is still on stdout.
      output = (error as { stdout: string }).stdout;
    }
    const findings = (JSON.parse(output) as Array<{ Rule: { Id: string }; Message: string; Level: string }>)
      .filter((finding) => !(finding.Rule.Id in ACCEPTED_WARNINGS && finding.Level === 'Warning'))
      .map((finding) => `${finding.Level} ${finding.Rule.Id}: ${finding.Message}`);
    expect(findings).toEqual([]);
  });
});
