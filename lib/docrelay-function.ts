/**
 * The one base of every docrelay Lambda function, so no function drifts: arm64, one runtime, tracing when
 * asked for, a log group with a retention, an own role with no AWS managed policy, and the same local esbuild
 * bundling, with the validated configuration copied into the asset beside the code.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import {
  type BundlingOptions,
  NodejsFunction,
  type NodejsFunctionProps,
  OutputFormat,
} from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { BuildOptions } from 'esbuild';
import { LAMBDA_ENV, MAPPING_ISOLATE_FILE } from '../functions/config/lambda-env';
import { acknowledge } from './builders/nag';

/**
 * The first directory at or above `start` holding one of `names`, with the name found there; undefined at the
 * file system's root.
 */
function findUp(start: string, names: readonly string[]): { dir: string; name: string } | undefined {
  for (let dir = start; ; dir = dirname(dir)) {
    const name = names.find((candidate) => existsSync(join(dir, candidate)));
    if (name !== undefined) return { dir, name };
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * docrelay's package root, where `functions/` is: the repository in a clone (this file runs from lib/ through
 * tsx or Jest), or `node_modules/docrelay` when installed (it runs from dist/lib/, and the package ships the
 * functions' TypeScript sources for esbuild to bundle at the consumer's synth).
 */
export const PROJECT_ROOT = findUp(__dirname, ['package.json'])?.dir ?? join(__dirname, '..');

/**
 * The EC2 actions of the AWS managed policy AWSLambdaVPCAccessExecutionRole (v3), which Lambda uses to manage a
 * VPC function's network interfaces. The policy's log actions are not here: every function may write its own
 * log group already.
 */
export const VPC_ACCESS_ACTIONS = [
  'ec2:CreateNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeSubnets',
  'ec2:DeleteNetworkInterface',
  'ec2:AssignPrivateIpAddresses',
  'ec2:UnassignPrivateIpAddresses',
] as const;

/** The lock files NodejsFunction recognises, in the order it looks for them. */
const LOCK_FILES = ['pnpm-lock.yaml', 'yarn.lock', 'bun.lock', 'bun.lockb', 'package-lock.json'] as const;

/**
 * The directory esbuild runs in and the lock file that picks the package manager: the repository in a clone;
 * installed, the app's root (npm never packs a lock file), which holds the lock file and the esbuild docrelay
 * depends on, and sits above node_modules/docrelay as NodejsFunction wants the entry under the project root.
 */
export function bundlingRoot(packageRoot: string = PROJECT_ROOT): { projectRoot: string; lockFile: string } {
  const found = findUp(packageRoot, LOCK_FILES);
  if (found === undefined) {
    throw new Error(
      `docrelay: no lock file (${LOCK_FILES.join(', ')}) at or above ${packageRoot}; ` +
        'install docrelay with a package manager that writes one, so its functions can be bundled',
    );
  }
  return { projectRoot: found.dir, lockFile: join(found.dir, found.name) };
}

/** File name of the configuration inside every function's asset (read by functions/wiring/lambda.ts). */
export const BUNDLED_CONFIG_FILE = 'docrelay.config.json';

/** The Lambda runtime of every function: the newest Node.js this aws-cdk-lib knows. */
export const FUNCTION_RUNTIME = Runtime.NODEJS_24_X;

/** esbuild's target for that runtime. */
export const BUNDLE_TARGET = 'node24';

/** docrelay's Lambda entry points, each `functions/handlers/<name>/handler.ts` exporting `handler`. */
export const FUNCTION_NAMES = ['ingest', 'worker', 'jobs-api', 'event-ingest', 'reconciler'] as const;

/** One of `FUNCTION_NAMES`. */
export type DocRelayFunctionName = (typeof FUNCTION_NAMES)[number];

/** The handler file of a function. */
export const functionEntry = (name: DocRelayFunctionName): string =>
  join(PROJECT_ROOT, 'functions', 'handlers', name, 'handler.ts');

/**
 * esbuild aliases of a function's bundle: the SDK's default credential chain becomes its environment link,
 * the only one that answers in Lambda, and without tracing the X-Ray SDK and the Tracer become stand-ins that
 * throw. Why: docs/decisions.md, "AWS clients and bundles".
 */
export function bundleAliases(options: BundleOptions = {}): Record<string, string> {
  return {
    '@aws-sdk/credential-provider-node': join(PROJECT_ROOT, 'functions', 'adapters', 'lambda-credentials.ts'),
    ...(options.tracing === true
      ? {}
      : {
          'aws-xray-sdk-core': join(PROJECT_ROOT, 'functions', 'commons', 'no-xray.ts'),
          // The subpath too: esbuild would look for it under the stand-in's path (`no-tracer.ts/middleware`).
          '@aws-lambda-powertools/tracer/middleware': join(
            PROJECT_ROOT,
            'functions',
            'commons',
            'no-tracer.ts',
          ),
          '@aws-lambda-powertools/tracer': join(PROJECT_ROOT, 'functions', 'commons', 'no-tracer.ts'),
        }),
  };
}

/**
 * Packages a function loads only for some requests (the XML parser: functions/core/body.ts), left out of the
 * bundle and built after it into the asset's `node_modules/<name>/index.js`, where the bundle's `require` finds
 * them; a cold start of JSON deliveries never reads them.
 */
export const LAZY_MODULES = ['fast-xml-parser'] as const;

/** A file built beside a function's bundle, after it: its entry point and its path in the asset. */
export interface BesideBundle {
  readonly entry: string;
  readonly file: string;
}

/**
 * What every function's asset holds beside its bundle: LAZY_MODULES, and the mapping isolate's own bundle
 * (`MAPPING_ISOLATE_FILE`), which the isolate's threads load instead of the whole function bundle
 * (functions/mapping/isolate.ts).
 */
export function besideBundles(): BesideBundle[] {
  const from = { paths: [PROJECT_ROOT] };
  return [
    ...LAZY_MODULES.map((name) => ({
      entry: require.resolve(name, from),
      file: join('node_modules', name, 'index.js'),
    })),
    { entry: join(PROJECT_ROOT, 'functions', 'mapping', 'isolate.ts'), file: MAPPING_ISOLATE_FILE },
  ];
}

/** The esbuild options of one file beside the bundle in `outputDir` (minified CommonJS, as the bundle). */
export function besideBundleOptions(
  beside: BesideBundle,
  outputDir: string,
  target: string = BUNDLE_TARGET,
): BuildOptions {
  return {
    entryPoints: [beside.entry],
    outfile: join(outputDir, beside.file),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target,
    minify: true,
    mainFields: ['module', 'main'],
    logLevel: 'warning',
  };
}

/** The commands that build every file of `besideBundles()` into `outputDir`, with the project's own esbuild. */
export function besideBundleCommands(outputDir: string): string[] {
  const esbuild = require.resolve('esbuild', { paths: [PROJECT_ROOT] });
  return besideBundles().map((beside) => {
    const script = `require(${JSON.stringify(esbuild)}).buildSync(${JSON.stringify(besideBundleOptions(beside, outputDir))})`;
    return `${shellQuote(process.execPath)} -e ${shellQuote(script)}`;
  });
}

/** What a function's bundle is built for: tracing and source maps, each off unless asked for. */
export interface BundleOptions {
  /** The X-Ray SDK is bundled (and the Tracer can load) only with tracing. @default false */
  readonly tracing?: boolean;
  /** A source map is written beside the bundle and Node applies it to stack traces. @default false */
  readonly sourceMaps?: boolean;
}

/**
 * `NODE_OPTIONS` of a function: `--enable-source-maps` with source maps, else none. Node parses the whole map
 * at load, so it is opt-in; error classes carry their names either way (functions/commons/errors.ts).
 */
export function functionNodeOptions(options: BundleOptions = {}): string | undefined {
  return options.sourceMaps === true ? '--enable-source-maps' : undefined;
}

const ALIAS_ARG = '--alias:';

const shellQuote = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * The bundling options of every function. `configFile` is copied into the asset after bundling: it can
 * outgrow Lambda's 4 KB environment, and it changes the asset hash. `tracing` must match the function's, and
 * `sourceMaps` its `NODE_OPTIONS` (`functionNodeOptions`).
 */
export function docrelayBundling(configFile: string, options: BundleOptions = {}): BundlingOptions {
  return {
    // Docker is not needed (nor available on many CI runners): esbuild from node_modules bundles locally.
    forceDockerBundling: false,
    minify: true,
    // A map is only of use to Node with --enable-source-maps (functionNodeOptions), for stack traces alone:
    // without it, no map is written; with it, the sources are left out (they would double its size).
    sourceMap: options.sourceMaps === true,
    sourcesContent: false,
    target: BUNDLE_TARGET,
    format: OutputFormat.CJS,
    // Bundle the AWS SDK v3 instead of using the runtime's copy: the version we test is the one that runs,
    // and its ES module builds ('module' first) let esbuild tree-shake what the functions do not use. Only the
    // modules loaded on some requests stay out, built beside the bundle after it (LAZY_MODULES).
    externalModules: [...LAZY_MODULES],
    bundleAwsSDK: true,
    mainFields: ['module', 'main'],
    esbuildArgs: Object.fromEntries(
      Object.entries(bundleAliases(options)).map(([name, target]) => [`${ALIAS_ARG}${name}`, target]),
    ),
    // Names are not kept: keeping them wraps every function and class in a naming call (size and load CPU,
    // bench/analysis.md). Error classes write their names out (functions/commons/errors.ts).
    keepNames: false,
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (_inputDir: string, outputDir: string) => [
        `cp ${shellQuote(configFile)} ${shellQuote(join(outputDir, BUNDLED_CONFIG_FILE))}`,
        ...besideBundleCommands(outputDir),
      ],
    },
  };
}

/**
 * The esbuild JS API options equivalent to the command line NodejsFunction builds from `bundling` (the bundle
 * smoke test uses them, so what it loads is what Lambda runs).
 */
export function esbuildBuildOptions(bundling: BundlingOptions, entry: string, outfile: string): BuildOptions {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    target: bundling.target ?? BUNDLE_TARGET,
    format: bundling.format === OutputFormat.ESM ? 'esm' : 'cjs',
    minify: bundling.minify ?? false,
    sourcemap: bundling.sourceMap ?? false,
    sourcesContent: bundling.sourcesContent ?? true,
    external: [...(bundling.externalModules ?? ['@aws-sdk/*'])],
    keepNames: bundling.keepNames ?? false,
    ...(bundling.mainFields === undefined ? {} : { mainFields: [...bundling.mainFields] }),
    ...(bundling.define === undefined ? {} : { define: { ...bundling.define } }),
    ...aliasesOf(bundling),
    logLevel: 'warning',
  };
}

/** The `--alias:` arguments of `bundling.esbuildArgs` as esbuild's `alias` option. */
function aliasesOf(bundling: BundlingOptions): Pick<BuildOptions, 'alias'> {
  const alias = Object.fromEntries(
    Object.entries(bundling.esbuildArgs ?? {})
      .filter(([arg, target]) => arg.startsWith(ALIAS_ARG) && typeof target === 'string')
      .map(([arg, target]) => [arg.slice(ALIAS_ARG.length), String(target)]),
  );
  return Object.keys(alias).length === 0 ? {} : { alias };
}

/** Memory and timeout of one function. */
export interface FunctionSizing {
  /** Memory in MB (CPU and network bandwidth scale with it). */
  readonly memorySize?: number;
  /** Maximum run time. */
  readonly timeout?: Duration;
}

/** Per-function settings a caller may give: sizing, network placement, concurrency, extra environment. */
export interface DocRelayFunctionOptions extends FunctionSizing {
  /** VPC to run in, e.g. to reach the service from allow-listed NAT addresses. @default no VPC */
  readonly vpc?: IVpc;
  /** Subnets in `vpc`. @default the VPC's private subnets (Lambda's default) */
  readonly vpcSubnets?: SubnetSelection;
  /** Security groups in `vpc`. @default one created by Lambda, egress open */
  readonly securityGroups?: ISecurityGroup[];
  /** Reserved concurrency (taken from the account's unreserved pool, of which Lambda keeps 100). @default none */
  readonly reservedConcurrentExecutions?: number;
  /** Environment variables added to the function's; docrelay's own variables win over them. @default none */
  readonly environment?: Readonly<Record<string, string>>;
}

/** Props of `DocRelayFunction`. */
export interface DocRelayFunctionProps extends FunctionSizing {
  /** Which entry point (functions/handlers/<name>/handler.ts). */
  readonly name: DocRelayFunctionName;
  /** Path of the validated configuration as JSON, copied into the asset as docrelay.config.json. */
  readonly configFile: string;
  /** Environment beyond the Powertools and source-map variables this base sets. */
  readonly environment?: Readonly<Record<string, string>>;
  /** Retention of the function's log group. @default RetentionDays.ONE_MONTH */
  readonly logRetention?: RetentionDays;
  /** Removal policy of the function's log group. @default RemovalPolicy.RETAIN (the CDK default for logs) */
  readonly logRemovalPolicy?: RemovalPolicy;
  /** CloudWatch namespace of the function's EMF metrics. @default 'docrelay' */
  readonly metricsNamespace?: string;
  /** Powertools service name (the metrics' `service` dimension). @default `docrelay-<name>` */
  readonly serviceName?: string;
  /** Powertools log level. @default 'INFO' */
  readonly logLevel?: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /**
   * X-Ray active tracing: the function's role may write traces and the handler loads the Powertools Tracer
   * (a handler segment per invocation, the AWS SDK and HTTP calls as subsegments). Off, the Tracer and
   * aws-xray-sdk-core are not loaded: their async hooks slow every promise and the cold start.
   * @default false
   */
  readonly tracing?: boolean;
  /**
   * Source maps: the bundle's map is written into the asset and `NODE_OPTIONS=--enable-source-maps` makes
   * stack traces point into the TypeScript sources, at a cost in load time (bench/analysis.md); off, traces show
   * minified names (error classes keep theirs).
   * @default false
   */
  readonly sourceMaps?: boolean;
  /** One-line description shown in the console. */
  readonly description: string;
  /**
   * Escape hatch for anything else NodejsFunction takes; the values this base requires (runtime, architecture,
   * entry, bundling, role, logging, tracing) are applied over it.
   */
  readonly functionProps?: Omit<
    NodejsFunctionProps,
    | 'entry'
    | 'handler'
    | 'runtime'
    | 'architecture'
    | 'bundling'
    | 'role'
    | 'logGroup'
    | 'logRetention'
    | 'tracing'
    | 'projectRoot'
    | 'depsLockFilePath'
    | 'functionName'
    | 'memorySize'
    | 'timeout'
    | 'environment'
  >;
}

/** A docrelay Lambda function: NodejsFunction with the settings every docrelay function shares. */
export class DocRelayFunction extends NodejsFunction {
  /** The function's log group (retention set; Lambda writes to it, no other group). */
  public readonly functionLogGroup: LogGroup;
  /** The function's execution role (created here, so no AWS managed policy is attached). */
  public readonly executionRole: Role;

  constructor(scope: Construct, id: string, props: DocRelayFunctionProps) {
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      ...(props.logRemovalPolicy === undefined ? {} : { removalPolicy: props.logRemovalPolicy }),
    });
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `docrelay ${props.name} function`,
    });
    // Only the two actions Lambda needs to write logs, on this function's log group alone.
    logGroup.grantWrite(role);
    // aws-cdk-lib attaches AWSLambdaVPCAccessExecutionRole only to a role it creates itself; this role needs
    // the policy's network interface actions (its log actions are granted above, scoped), added before the
    // function so CloudFormation creates the function after them (Lambda checks them at creation).
    const inVpc = props.functionProps?.vpc !== undefined;
    if (inVpc) role.addToPolicy(new PolicyStatement({ actions: [...VPC_ACCESS_ACTIONS], resources: ['*'] }));
    const wildcards = [
      ...(props.tracing === true
        ? [
            'the X-Ray statement (PutTraceSegments, PutTelemetryRecords): X-Ray supports no resource-level permissions',
          ]
        : []),
      ...(inVpc
        ? [
            'the VPC statement (the network interface actions of AWSLambdaVPCAccessExecutionRole): Lambda creates and deletes the interfaces of its choosing, and the Describe actions support no resource-level permissions',
          ]
        : []),
    ];
    if (wildcards.length > 0) {
      acknowledge(
        role,
        'AwsSolutions-IAM5[Resource::*]',
        `Only ${wildcards.join('; and ')} has Resource "*".`,
      );
    }
    const { projectRoot, lockFile } = bundlingRoot();
    const bundle: BundleOptions = { tracing: props.tracing === true, sourceMaps: props.sourceMaps === true };
    const nodeOptions = functionNodeOptions(bundle);
    super(scope, id, {
      ...props.functionProps,
      description: props.description,
      entry: functionEntry(props.name),
      handler: 'handler',
      runtime: FUNCTION_RUNTIME,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 256,
      timeout: props.timeout ?? Duration.seconds(10),
      // DISABLED sets no tracing config and, unlike PASS_THROUGH, grants no X-Ray actions.
      tracing: props.tracing === true ? Tracing.ACTIVE : Tracing.DISABLED,
      role,
      logGroup,
      projectRoot,
      depsLockFilePath: lockFile,
      bundling: docrelayBundling(props.configFile, bundle),
      environment: {
        ...props.environment,
        [LAMBDA_ENV.configPath]: BUNDLED_CONFIG_FILE,
        ...(nodeOptions === undefined ? {} : { NODE_OPTIONS: nodeOptions }),
        POWERTOOLS_SERVICE_NAME: props.serviceName ?? `docrelay-${props.name}`,
        POWERTOOLS_METRICS_NAMESPACE: props.metricsNamespace ?? 'docrelay',
        POWERTOOLS_LOG_LEVEL: props.logLevel ?? 'INFO',
        [LAMBDA_ENV.tracing]: String(props.tracing === true),
      },
    });
    this.functionLogGroup = logGroup;
    this.executionRole = role;
  }
}
