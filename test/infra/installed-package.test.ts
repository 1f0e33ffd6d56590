/**
 * docrelay as another team installs it: the project is packed (`npm pack`, whose prepack compiles lib/ to
 * dist/), the tarball is installed into a fresh plain-JavaScript CDK app in a temporary folder, offline from
 * the npm cache, and the app adds two DocRelay stacks for one account with the configuration as a parsed
 * object and synthesizes both, its functions bundled by esbuild from the installed package (no Docker).
 */
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { MAPPING_ISOLATE_FILE } from '../../functions/config/lambda-env';
import { FUNCTION_NAMES } from '../../lib/docrelay-function';
import { offlineAppLock, type PackedManifest } from './offline-lock';
import { FIXTURE_CONFIG, ROOT } from './support';

const run = promisify(execFile);

/** The context key naming the stacks whose assets are bundled (cx-api's BUNDLING_STACKS). */
const BUNDLING_STACKS = 'aws:cdk:bundling-stacks';

/** npm without the registry: everything must come from the cache. */
const NPM_ENV = {
  ...process.env,
  npm_config_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};

/** The consumer's CDK app: plain JavaScript, `require('docrelay')`, two deployments in one account. */
const APP_SOURCE = `const { readFileSync } = require('node:fs');
const { App, Stack } = require('aws-cdk-lib');
const docrelay = require('docrelay');
const { DocRelay } = docrelay;

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const app = new App({ outdir: process.argv[3] });
const env = { account: '111122223333', region: 'eu-west-1' };
for (const id of ['DocsProd', 'DocsStaging']) {
  const stack = new Stack(app, id, { env });
  new DocRelay(stack, 'Docs', { config, createSecrets: true });
}
app.synth();
process.stdout.write(JSON.stringify(Object.keys(docrelay)));
`;

interface CfnTemplate {
  readonly Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
}

/** The values of `property` of every resource of `type`. */
function propertyValues(template: CfnTemplate, type: string, property: string): unknown[] {
  return Object.values(template.Resources)
    .filter((resource) => resource.Type === type)
    .map((resource) => resource.Properties?.[property]);
}

/** The metric identity of a deployment: its functions' namespaces and service names, its alarms' namespaces. */
function metricIdentity(template: CfnTemplate): string[] {
  const variables = propertyValues(template, 'AWS::Lambda::Function', 'Environment').map(
    (environment) => (environment as { Variables: Record<string, string> }).Variables,
  );
  const alarmNamespaces = propertyValues(template, 'AWS::CloudWatch::Alarm', 'Namespace').filter(
    (namespace): namespace is string => typeof namespace === 'string' && !namespace.startsWith('AWS/'),
  );
  return [
    ...variables.map((variable) => `namespace ${variable.POWERTOOLS_METRICS_NAMESPACE}`),
    ...variables.map((variable) => `service ${variable.POWERTOOLS_SERVICE_NAME}`),
    ...alarmNamespaces.map((namespace) => `namespace ${namespace}`),
  ];
}

const common = (a: readonly unknown[], b: readonly unknown[]): unknown[] => {
  const other = new Set(b.map((value) => JSON.stringify(value)));
  return a.filter((value) => other.has(JSON.stringify(value)));
};

describe('the packed construct in a fresh CDK app', () => {
  const work = mkdtempSync(join(tmpdir(), 'docrelay-package-'));
  const appDir = join(work, 'platform-app');
  const outdir = join(work, 'cdk.out');
  let files: string[] = [];
  let templates: Record<'DocsProd' | 'DocsStaging', CfnTemplate>;
  let exported: string[] = [];

  beforeAll(async () => {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], {
      cwd: ROOT,
      env: NPM_ENV,
      maxBuffer: 16 * 1024 * 1024,
    });
    // npm prints the prepack script's output before the JSON.
    const packed = JSON.parse(stdout.slice(stdout.indexOf('[\n'))) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    const tarball = packed[0];
    if (tarball === undefined) throw new Error('npm pack wrote no tarball');
    files = tarball.files.map((file) => file.path);

    mkdirSync(appDir);
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackedManifest;
    const installed = (name: string): string =>
      (
        JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
          version: string;
        }
      ).version;
    const tarballSpec = `file:../${tarball.filename}`;
    const appDependencies = {
      'aws-cdk-lib': installed('aws-cdk-lib'),
      constructs: installed('constructs'),
      docrelay: tarballSpec,
    };
    writeFileSync(
      join(appDir, 'package.json'),
      JSON.stringify({ name: 'platform-app', private: true, dependencies: appDependencies }, null, 2),
    );
    const lock = offlineAppLock({
      appName: 'platform-app',
      appDependencies,
      tarballPath: join(work, tarball.filename),
      tarballSpec,
      packed: manifest,
      repositoryLock: join(ROOT, 'package-lock.json'),
    });
    writeFileSync(join(appDir, 'package-lock.json'), JSON.stringify(lock, null, 2));
    // No install scripts: esbuild's only checks its platform binary, which its optional dependency holds.
    await run('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
      cwd: appDir,
      env: NPM_ENV,
    });

    writeFileSync(join(appDir, 'app.js'), APP_SOURCE);
    // The configuration as another app would hold it: a parsed object, not a path docrelay reads.
    const configJson = join(work, 'docrelay-config.json');
    writeFileSync(configJson, JSON.stringify(parse(readFileSync(FIXTURE_CONFIG, 'utf8'))));
    const synth = await run(process.execPath, ['app.js', configJson, outdir], {
      cwd: appDir,
      // esbuild bundles the first stack's functions (the second's are the same code): time, not coverage.
      env: {
        ...NPM_ENV,
        CDK_VALIDATION: 'false',
        CDK_CONTEXT_JSON: JSON.stringify({ [BUNDLING_STACKS]: ['DocsProd'] }),
      },
      maxBuffer: 16 * 1024 * 1024,
    });
    const read = (stack: string): CfnTemplate =>
      JSON.parse(readFileSync(join(outdir, `${stack}.template.json`), 'utf8')) as CfnTemplate;
    templates = { DocsProd: read('DocsProd'), DocsStaging: read('DocsStaging') };
    exported = JSON.parse(synth.stdout) as string[];
  }, 300_000);

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  test('the tarball holds the compiled construct, its declarations and the functions, nothing local', () => {
    expect(files).toEqual(
      expect.arrayContaining(['dist/lib/index.js', 'dist/lib/index.d.ts', 'package.json']),
    );
    for (const name of FUNCTION_NAMES) expect(files).toContain(`functions/handlers/${name}/handler.ts`);
    expect(files.filter((path) => /^(local|test|bench|config|docs|bin\/commands)\//.test(path))).toEqual([]);
    expect(files.filter((path) => path.startsWith('dist/bundles/'))).toEqual([]);
  });

  test('require("docrelay") gives the constructs and the configuration loader', () => {
    expect(exported).toEqual(
      expect.arrayContaining([
        'DocRelay',
        'DocRelayStack',
        'DocRelayFunction',
        'loadConfigFileSync',
        'parseConfig',
      ]),
    );
  });

  test('the emulators are not installed with it', () => {
    const installed = readdirSync(join(appDir, 'node_modules'));
    expect(installed).toContain('esbuild');
    for (const emulator of ['s3rver', 'dynalite', 'fauxqs', 'docxtemplater', 'pizzip', 'tsx']) {
      expect(installed).not.toContain(emulator);
    }
  });

  test('every function is bundled by esbuild from the installed package, its config beside it', () => {
    const assets = readdirSync(outdir).filter((entry) => entry.startsWith('asset.'));
    const bundles = assets.filter((asset) => existsSync(join(outdir, asset, 'index.js')));
    // ingest, worker, jobs-api, reconciler and event-ingest (the fixture has an EventBridge integration).
    expect(bundles).toHaveLength(FUNCTION_NAMES.length);
    for (const bundle of bundles) expect(existsSync(join(outdir, bundle, 'docrelay.config.json'))).toBe(true);
    // And what the construct builds beside each bundle: the XML parser, and the mapping isolate's own bundle.
    for (const bundle of bundles) {
      expect(existsSync(join(outdir, bundle, 'node_modules', 'fast-xml-parser', 'index.js'))).toBe(true);
      expect(existsSync(join(outdir, bundle, MAPPING_ISOLATE_FILE))).toBe(true);
    }
  });

  test('the two deployments share no secret name, API name or metric identity', () => {
    const { DocsProd: prod, DocsStaging: staging } = templates;
    const secretNames = (template: CfnTemplate) =>
      propertyValues(template, 'AWS::SecretsManager::Secret', 'Name').filter((name) => name !== undefined);
    expect(secretNames(prod).length).toBeGreaterThan(0);
    expect(common(secretNames(prod), secretNames(staging))).toEqual([]);

    const apiNames = (template: CfnTemplate) => propertyValues(template, 'AWS::ApiGatewayV2::Api', 'Name');
    expect(apiNames(prod)).toHaveLength(1);
    expect(common(apiNames(prod), apiNames(staging))).toEqual([]);

    expect(metricIdentity(prod).length).toBeGreaterThan(0);
    expect(common(metricIdentity(prod), metricIdentity(staging))).toEqual([]);
  });
});
