/**
 * The bundled Lambda artifacts, smoke-tested: each handler is bundled with the construct's own esbuild options
 * and its config copy step, loaded by a separate `node` process (as Lambda loads it, with nothing but the
 * bundle on disk), and invoked on a sample event that needs no AWS call. Its answer must equal the unbundled
 * handler's answer to the same event. Catches missing modules, bad externals and minification breakage.
 */
import { execFile, execSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Context } from 'aws-lambda';
import { build } from 'esbuild';
import { LAMBDA_ENV, MAPPING_ISOLATE_FILE } from '../../functions/config/lambda-env';
import { loadConfigFileSync } from '../../functions/config/load';
import { ISOLATE_MARKER } from '../../functions/mapping/isolate';
import type { SecretSource } from '../../functions/ports/secret-source';
import {
  BUNDLED_CONFIG_FILE,
  type DocRelayFunctionName,
  docrelayBundling,
  esbuildBuildOptions,
  FUNCTION_NAMES,
  functionEntry,
  functionNodeOptions,
} from '../../lib/docrelay-function';
import { FIXTURE_CONFIG } from './support';

const run = promisify(execFile);

// Quiet, offline Powertools for both the bundles and the in-process handlers.
const QUIET = {
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  POWERTOOLS_METRICS_DISABLED: 'true',
  POWERTOOLS_TRACE_ENABLED: 'false',
};
Object.assign(process.env, QUIET);

const SETTINGS = {
  tableName: 'docrelay-smoke',
  queueUrl: 'https://sqs.eu-west-1.amazonaws.com/000000000000/docrelay-smoke',
  dlqUrl: 'https://sqs.eu-west-1.amazonaws.com/000000000000/docrelay-smoke-dlq',
  bucket: 'docrelay-smoke',
  sealingSecretName: 'docrelay/smoke-sealing',
  maxReceiveCount: 8,
  leaseSeconds: 1800,
};

/** What a bundle gets from the construct, plus dummy credentials so no client looks for real ones. */
const LAMBDA_ENVIRONMENT = {
  ...QUIET,
  [LAMBDA_ENV.configPath]: BUNDLED_CONFIG_FILE,
  [LAMBDA_ENV.tableName]: SETTINGS.tableName,
  [LAMBDA_ENV.queueUrl]: SETTINGS.queueUrl,
  [LAMBDA_ENV.dlqUrl]: SETTINGS.dlqUrl,
  [LAMBDA_ENV.bucket]: SETTINGS.bucket,
  [LAMBDA_ENV.sealingSecretName]: SETTINGS.sealingSecretName,
  [LAMBDA_ENV.maxReceiveCount]: String(SETTINGS.maxReceiveCount),
  [LAMBDA_ENV.leaseSeconds]: String(SETTINGS.leaseSeconds),
  NODE_OPTIONS: functionNodeOptions() ?? '',
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'AKIDSMOKETEST',
  AWS_SECRET_ACCESS_KEY: 'smoke-test-secret',
  // An unreachable endpoint: were a handler to call AWS after all, it fails instead of reaching the internet.
  AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
  PATH: process.env.PATH ?? '',
};

const CONTEXT: Context = {
  callbackWaitsForEmptyEventLoop: false,
  functionName: 'docrelay-smoke',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:000000000000:function:docrelay-smoke',
  memoryLimitInMB: '256',
  awsRequestId: '00000000-0000-4000-8000-000000000000',
  logGroupName: '/aws/lambda/docrelay-smoke',
  logStreamName: 'smoke',
  getRemainingTimeInMillis: () => 10_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
};

const httpEvent = (
  method: string,
  routeKey: string,
  rawPath: string,
  pathParameters: Record<string, string>,
) => ({
  version: '2.0',
  routeKey,
  rawPath,
  rawQueryString: '',
  headers: { 'content-type': 'application/json' },
  pathParameters,
  requestContext: {
    accountId: '000000000000',
    apiId: 'smoke',
    domainName: 'smoke.execute-api.eu-west-1.amazonaws.com',
    domainPrefix: 'smoke',
    http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'smoke' },
    requestId: 'smoke',
    routeKey,
    stage: '$default',
    time: '01/Jan/2030:00:00:00 +0000',
    timeEpoch: 1_893_456_000_000,
  },
  body: '{"hello":"world"}',
  isBase64Encoded: false,
});

/** The sample events: none of them needs DynamoDB, SQS, S3 or a secret. */
const CASES: Array<{ name: string; fn: DocRelayFunctionName; event: unknown }> = [
  {
    name: 'ingest: POST to an unknown integration is a 404 problem',
    fn: 'ingest',
    event: httpEvent('POST', 'POST /v1/hooks/{integrationId}', '/v1/hooks/nope', { integrationId: 'nope' }),
  },
  {
    name: 'ingest: GET is a 405 problem',
    fn: 'ingest',
    event: httpEvent('GET', 'GET /v1/hooks/{integrationId}', '/v1/hooks/github-releases', {
      integrationId: 'github-releases',
    }),
  },
  {
    name: 'jobs-api: an invalid job id is a 404 problem',
    fn: 'jobs-api',
    event: httpEvent('GET', 'GET /v1/jobs/{jobId}', '/v1/jobs/not..valid', { jobId: 'not..valid' }),
  },
  {
    name: 'event-ingest: an input that is not an event delivery is rejected',
    fn: 'event-ingest',
    event: { nope: 1 },
  },
  { name: 'worker: an empty batch has no failures', fn: 'worker', event: { Records: [] } },
];

type Outcome = { resolved: unknown } | { rejected: { name: string; message: string } } | { loaded: string };

/** Loads a bundle in a fresh node process and invokes its handler (or only loads it when `event` is null). */
const RUNNER = `
const [bundle, eventJson] = process.argv.slice(1);
const print = (outcome) => process.stdout.write('\\n@@OUTCOME@@' + JSON.stringify(outcome) + '\\n');
const loaded = require(bundle);
const event = JSON.parse(eventJson);
const context = ${JSON.stringify({ ...CONTEXT, getRemainingTimeInMillis: undefined })};
context.getRemainingTimeInMillis = () => 10000;
if (event === null) print({ loaded: typeof loaded.handler });
else Promise.resolve()
  .then(() => loaded.handler(event, context))
  .then((resolved) => print({ resolved }), (error) => print({ rejected: { name: error.name, message: error.message } }));
`;

async function invokeBundle(
  dir: string,
  event: unknown,
  env: Readonly<Record<string, string>> = {},
): Promise<Outcome> {
  const { stdout } = await run(
    process.execPath,
    ['-e', RUNNER, join(dir, 'index.js'), JSON.stringify(event)],
    {
      cwd: dir,
      env: { ...LAMBDA_ENVIRONMENT, ...env },
    },
  );
  const line = stdout.split('\n').find((text) => text.startsWith('@@OUTCOME@@'));
  if (line === undefined) throw new Error(`no outcome from the bundle in ${dir}:\n${stdout}`);
  return JSON.parse(line.slice('@@OUTCOME@@'.length)) as Outcome;
}

/** The same handler, unbundled, built by its factory with dependencies from the same settings. */
async function invokeSource(fn: DocRelayFunctionName, event: unknown): Promise<Outcome> {
  const { createAwsClients } = await import('../../functions/adapters/aws-clients');
  const { createObservability } = await import('../../functions/commons/observability');
  const secrets: SecretSource = {
    get: (name) => Promise.reject(new Error(`the smoke events need no secret, yet ${name} was read`)),
    refresh: () => undefined,
  };
  const config = loadConfigFileSync(FIXTURE_CONFIG);
  const clients = createAwsClients({
    region: 'eu-west-1',
    credentials: { accessKeyId: 'AKIDSMOKETEST', secretAccessKey: 'smoke-test-secret' },
    endpoints: { s3: 'http://127.0.0.1:9', sqs: 'http://127.0.0.1:9', dynamodb: 'http://127.0.0.1:9' },
  });
  const tables = { dynamodb: clients.dynamodb, tableName: SETTINGS.tableName };
  const ingestDeps = async () =>
    (await import('../../functions/wiring/ingest')).buildIngestDeps({
      config,
      secrets,
      ...tables,
      sqs: clients.sqs,
      queueUrl: SETTINGS.queueUrl,
      sealingSecretName: SETTINGS.sealingSecretName,
    });
  const observability = createObservability(fn);
  const handler = await (async () => {
    switch (fn) {
      case 'ingest':
        return (await import('../../functions/handlers/ingest/make-handler')).makeIngestHandler(
          await ingestDeps(),
          observability,
        );
      case 'jobs-api':
        return (await import('../../functions/handlers/jobs-api/make-handler')).makeJobsApiHandler(
          (await import('../../functions/wiring/jobs-api')).buildJobsApiDeps({
            ...tables,
            s3: clients.s3,
            bucket: SETTINGS.bucket,
          }),
          observability,
        );
      case 'event-ingest':
        return (await import('../../functions/handlers/event-ingest/make-handler')).makeEventIngestHandler(
          await ingestDeps(),
          observability,
        );
      case 'worker':
        return (await import('../../functions/handlers/worker/make-handler')).makeWorkerHandler(
          (await import('../../functions/wiring/worker')).buildWorkerDeps({
            config,
            secrets,
            ...tables,
            sqs: clients.sqs,
            s3: clients.s3,
            eventBridge: clients.eventBridge,
            queueUrl: SETTINGS.queueUrl,
            dlqUrl: SETTINGS.dlqUrl,
            bucket: SETTINGS.bucket,
            sealingSecretName: SETTINGS.sealingSecretName,
            maxReceiveCount: SETTINGS.maxReceiveCount,
            leaseMs: SETTINGS.leaseSeconds * 1000,
          }),
          observability,
        );
      case 'reconciler':
        return (await import('../../functions/handlers/reconciler/make-handler')).makeReconcilerHandler(
          (await import('../../functions/wiring/reconciler')).buildReconcilerDeps({
            ...tables,
            sqs: clients.sqs,
            queueUrl: SETTINGS.queueUrl,
            leaseMs: SETTINGS.leaseSeconds * 1000,
          }),
          observability,
        );
    }
  })();
  const invoke = handler as unknown as (event: unknown, context: Context) => Promise<unknown>;
  try {
    return { resolved: JSON.parse(JSON.stringify(await invoke(event, CONTEXT))) };
  } catch (error) {
    const failure = error as Error;
    return { rejected: { name: failure.name, message: failure.message } };
  }
}

describe('bundled Lambda artifacts', () => {
  const work = mkdtempSync(join(tmpdir(), 'docrelay-bundles-'));
  const dirs = new Map<DocRelayFunctionName, string>();
  const inputs = new Map<DocRelayFunctionName, string[]>();
  // The same functions built for a deployment with tracing on.
  const tracedDirs = new Map<DocRelayFunctionName, string>();
  const tracedInputs = new Map<DocRelayFunctionName, string[]>();
  // And built with source maps.
  const mappedDirs = new Map<DocRelayFunctionName, string>();

  beforeAll(async () => {
    // The validated config as the construct writes it, and the construct's bundling options for it.
    const configFile = join(work, 'config.json');
    writeFileSync(configFile, JSON.stringify(loadConfigFileSync(FIXTURE_CONFIG).config));
    const variants = [
      { suffix: '', bundling: docrelayBundling(configFile), into: [dirs, inputs] },
      {
        suffix: '-traced',
        bundling: docrelayBundling(configFile, { tracing: true }),
        into: [tracedDirs, tracedInputs],
      },
      {
        suffix: '-mapped',
        bundling: docrelayBundling(configFile, { sourceMaps: true }),
        into: [mappedDirs, new Map<DocRelayFunctionName, string[]>()],
      },
    ] as const;
    await Promise.all(
      variants.flatMap(({ suffix, bundling, into: [dirsOf, inputsOf] }) =>
        FUNCTION_NAMES.map(async (name) => {
          const dir = join(work, `${name}${suffix}`);
          mkdirSync(dir);
          const { metafile } = await build({
            ...esbuildBuildOptions(bundling, functionEntry(name), join(dir, 'index.js')),
            metafile: true,
          });
          inputsOf.set(name, Object.keys(metafile.inputs));
          for (const command of bundling.commandHooks?.afterBundling(join(work, 'input'), dir) ?? []) {
            execSync(command, { stdio: 'pipe' });
          }
          dirsOf.set(name, dir);
        }),
      ),
    );
  }, 60_000);

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  test.each(FUNCTION_NAMES)('%s loads from its bundle alone and exports a handler', async (name) => {
    expect(await invokeBundle(dirs.get(name)!, null)).toEqual({ loaded: 'function' });
  });

  test.each(CASES)('$name, bundled as unbundled', async ({ fn, event }) => {
    const [bundled, source] = await Promise.all([
      invokeBundle(dirs.get(fn)!, event),
      invokeSource(fn, event),
    ]);
    expect(bundled).toEqual(source);
  });

  test.each(FUNCTION_NAMES)(
    '%s ships the XML parser beside its bundle, loaded by name, parsing as the package does',
    async (name) => {
      const dir = dirs.get(name)!;
      expect(inputs.get(name)?.some((input) => input.includes('node_modules/fast-xml-parser/'))).toBe(false);
      const script = `const { XMLParser } = require('fast-xml-parser');
        process.stdout.write(JSON.stringify(new XMLParser({ ignoreAttributes: false }).parse(process.argv[1])));`;
      const xmlText = '<order id="7"><item>a</item><item>b</item></order>';
      // Resolved from the bundle's folder, as the bundle's require('fast-xml-parser') is in Lambda.
      const { stdout } = await run(process.execPath, ['-e', script, xmlText], { cwd: dir });
      const { XMLParser } = await import('fast-xml-parser');
      expect(JSON.parse(stdout)).toEqual(new XMLParser({ ignoreAttributes: false }).parse(xmlText));
      expect(existsSync(join(dir, 'node_modules', 'fast-xml-parser', 'index.js'))).toBe(true);
    },
  );

  test.each(FUNCTION_NAMES)(
    '%s ships the mapping isolate beside its bundle: a thread of it evaluates as the sources do, bounds included',
    async (name) => {
      const dir = dirs.get(name)!;
      const expressions = [
        { source: '$sum(items.(qty * price))', path: 'data.Total', limits: {} },
        { source: '$uppercase(customer.name) & " #" & $string($n)', path: 'data.Title', limits: {} },
        { source: '$count([1..100000000])', path: 'data.Huge', limits: { maxSequence: 1000 } },
      ];
      const body = {
        items: [
          { qty: 2, price: 3.5 },
          { qty: 1, price: 10 },
        ],
        customer: { name: 'Ada' },
      };
      const bindings = { n: 7 };
      // As functions/mapping/isolate.ts starts it: the file beside the bundle, the marker in workerData.
      const script = `const { Worker } = require('node:worker_threads');
        const worker = new Worker(${JSON.stringify(join(dir, MAPPING_ISOLATE_FILE))},
          { workerData: { ${JSON.stringify(ISOLATE_MARKER)}: true } });
        const request = JSON.parse(process.argv[1]);
        worker.on('message', (reply) => {
          if (reply.ready) worker.postMessage(request);
          else { process.stdout.write(JSON.stringify(reply)); void worker.terminate(); }
        });`;
      const request = { id: 1, expressions, body, bindings };
      const { stdout } = await run(process.execPath, ['-e', script, JSON.stringify(request)], { cwd: dir });
      const { compileExpression } = await import('../../functions/config/expressions');
      const { evaluateAll } = await import('../../functions/mapping/evaluate');
      const inProcess = await evaluateAll(
        expressions.map((e) => compileExpression(e.source, e.path, e.limits)),
        { body, bindings },
      );
      const reply = JSON.parse(stdout) as { id: number; outcomes: unknown[] };
      expect(reply).toEqual({ id: 1, outcomes: JSON.parse(JSON.stringify(inProcess)) });
      expect(reply.outcomes).toEqual([
        { ok: true, value: 17 },
        { ok: true, value: 'ADA #7' },
        expect.objectContaining({ ok: false }),
      ]);
      // Its own entry: jsonata and the evaluation, none of the function's handler, SDK or configuration.
      const code = readFileSync(join(dir, MAPPING_ISOLATE_FILE), 'utf8');
      expect(code).not.toMatch(/DynamoDB|SQSClient|powertools/i);
    },
  );

  test.each(FUNCTION_NAMES)(
    '%s bundles the environment credential provider alone, not the default chain and its SSO/STS clients',
    (name) => {
      const providers = (inputs.get(name) ?? [])
        .map(
          (input) =>
            /node_modules\/(@aws-sdk\/(?:credential-provider-[^/]+|nested-clients|token-providers))\//.exec(
              input,
            )?.[1],
        )
        .filter((found) => found !== undefined);
      expect([...new Set(providers)]).toEqual(['@aws-sdk/credential-provider-env']);
    },
  );

  test.each(FUNCTION_NAMES)(
    '%s carries the X-Ray SDK and the Tracer only when built with tracing',
    (name) => {
      const carries = (files: string[] | undefined, folder: string) =>
        (files ?? []).some((input) => input.includes(`node_modules/${folder}/`));
      const both = (files: string[] | undefined) => [
        carries(files, 'aws-xray-sdk-core'),
        carries(files, '@aws-lambda-powertools/tracer'),
      ];
      expect([both(inputs.get(name)), both(tracedInputs.get(name))]).toEqual([
        [false, false],
        [true, true],
      ]);
    },
  );

  test.each(CASES)(
    '$name, built with tracing and DOCRELAY_TRACING=true (the Tracer loaded)',
    async ({ fn, event }) => {
      const [traced, plain] = await Promise.all([
        invokeBundle(tracedDirs.get(fn)!, event, { [LAMBDA_ENV.tracing]: 'true' }),
        invokeBundle(dirs.get(fn)!, event),
      ]);
      expect(traced).toEqual(plain);
    },
  );

  test.each(FUNCTION_NAMES)('%s has a source map only when built with source maps', (name) => {
    const mapped = (dir: string | undefined) => {
      const code = readFileSync(join(dir ?? '', 'index.js'), 'utf8');
      return [existsSync(join(dir ?? '', 'index.js.map')), code.includes('//# sourceMappingURL=')];
    };
    expect([mapped(dirs.get(name)), mapped(mappedDirs.get(name))]).toEqual([
      [false, false],
      [true, true],
    ]);
  });

  test.each(CASES)(
    '$name, built with source maps and NODE_OPTIONS=--enable-source-maps',
    async ({ fn, event }) => {
      const [mapped, plain] = await Promise.all([
        invokeBundle(mappedDirs.get(fn)!, event, {
          NODE_OPTIONS: functionNodeOptions({ sourceMaps: true }) ?? '',
        }),
        invokeBundle(dirs.get(fn)!, event),
      ]);
      expect(mapped).toEqual(plain);
    },
  );

  test('the answers are the expected ones', async () => {
    const outcomes = await Promise.all(CASES.map(({ fn, event }) => invokeBundle(dirs.get(fn)!, event)));
    const summary = outcomes.map((outcome) =>
      'resolved' in outcome
        ? ((outcome.resolved as { statusCode?: number }).statusCode ?? outcome.resolved)
        : 'rejected' in outcome
          ? outcome.rejected.name
          : outcome,
    );
    expect(summary).toEqual([404, 405, 404, 'DeliveryRefusedError', { batchItemFailures: [] }]);
    const problem = (outcomes[0] as { resolved: { headers: Record<string, string>; body: string } }).resolved;
    expect(problem.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(problem.body)).toMatchObject({
      status: 404,
      type: 'urn:docrelay:problem:unknown-integration',
    });
  });
});
