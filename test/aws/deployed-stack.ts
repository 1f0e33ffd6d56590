/**
 * docrelay "deployed" on moto for the aws tier: moto_server and the service emulator on loopback, the stack
 * synthesized for a small config, its data resources created from the template (template-deployer.ts), and
 * each function's bundle in a warm container with the environment its template gives it, plus what the
 * Lambda runtime sets (region, credentials in environment variables only) and AWS_ENDPOINT_URL, the SDK's
 * own variable, pointing at moto. Nothing in docrelay's code names an endpoint.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { App } from 'aws-cdk-lib';
import { loadConfigFileSync } from '../../functions/config/load';
import type { DocRelayFunctionName } from '../../lib/docrelay-function';
import { DocRelayStack } from '../../lib/docrelay-stack';
import { type EmulatorHandle, startEmulator } from '../../local/emulator/server';
import { type MotoServer, startMotoServer } from '../helpers/moto-server';
import { buildBundles, type LambdaContainer, startContainer } from './lambda-container';
import { type DeployedStack, deployTemplate, type Template } from './template-deployer';

process.env.CDK_VALIDATION = 'false';

export const REGION = 'eu-west-1';
export const ACCOUNT = '123456789012';
/** The one webhook integration of the tier's config (standard-webhooks, template 9003). */
export const INTEGRATION = 'notes';
const WEBHOOK_SECRET_NAME = 'aws-tier/notes-webhook';
const API_KEY_SECRET_NAME = 'aws-tier/service-api-key';
/** The credentials Lambda would put in the environment (moto takes any). */
export const CREDENTIALS = {
  AWS_ACCESS_KEY_ID: 'AKIAMOTOTIER',
  AWS_SECRET_ACCESS_KEY: 'moto-tier-secret',
  AWS_SESSION_TOKEN: 'moto-tier-session',
};

/** The clients a test reads moto with. */
export interface MotoClients {
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBClient;
  readonly s3: S3Client;
  readonly secretsManager: SecretsManagerClient;
  readonly eventBridge: EventBridgeClient;
}

/** A docrelay stack deployed on moto, with warm containers of its functions. */
export interface MotoDeployment {
  readonly moto: MotoServer;
  readonly emulator: EmulatorHandle;
  /** A scratch folder, removed by stop(). */
  readonly work: string;
  readonly configPath: string;
  readonly webhookSecret: string;
  readonly template: Template;
  readonly deployed: DeployedStack;
  /** Each function's environment, as its container runs. */
  readonly environments: ReadonlyMap<DocRelayFunctionName, Record<string, string>>;
  readonly containers: ReadonlyMap<DocRelayFunctionName, LambdaContainer>;
  readonly clients: MotoClients;
  stop(): Promise<void>;
}

/** Deploys the stack `stackName` for the tier's config (plus `integrationExtra` YAML lines) onto a new moto. */
export async function deployOnMoto(
  stackName: string,
  functions: readonly DocRelayFunctionName[],
  integrationExtra: readonly string[] = [],
): Promise<MotoDeployment> {
  const work = mkdtempSync(join(tmpdir(), 'docrelay-aws-tier-'));
  const [moto, emulator] = await Promise.all([
    startMotoServer(),
    startEmulator({ apiKey: randomBytes(16).toString('hex'), seed: 37 }),
  ]);
  const webhookSecret = `whsec_${randomBytes(24).toString('base64')}`;
  const configPath = join(work, 'docrelay.yaml');
  writeFileSync(
    configPath,
    [
      'service:',
      `  baseUrl: ${emulator.url}`,
      `  apiKeySecret: ${API_KEY_SECRET_NAME}`,
      'integrations:',
      `  - id: ${INTEGRATION}`,
      '    verify:',
      '      scheme: standard-webhooks',
      `      secret: ${WEBHOOK_SECRET_NAME}`,
      ...integrationExtra.map((line) => `    ${line}`),
      '    documents:',
      '      - name: note',
      '        template: { id: "9003" }',
      '        data:',
      '          Title: "data.title"',
      '          Body: "data.body"',
      '',
    ].join('\n'),
  );

  // The stack as `cdk synth` makes it; its assets are bundled below, as the construct bundles them.
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] }, outdir: join(work, 'cdk.out') });
  const stack = new DocRelayStack(app, stackName, {
    env: { account: ACCOUNT, region: REGION },
    docRelay: { config: loadConfigFileSync(configPath).config },
  });
  const template = app.synth().getStackByName(stackName).template as Template;

  const clientConfig = {
    region: REGION,
    endpoint: moto.url,
    credentials: {
      accessKeyId: CREDENTIALS.AWS_ACCESS_KEY_ID,
      secretAccessKey: CREDENTIALS.AWS_SECRET_ACCESS_KEY,
    },
  };
  const clients: MotoClients = {
    sqs: new SQSClient(clientConfig),
    dynamodb: new DynamoDBClient(clientConfig),
    s3: new S3Client({ ...clientConfig, forcePathStyle: true }),
    secretsManager: new SecretsManagerClient(clientConfig),
    eventBridge: new EventBridgeClient(clientConfig),
  };
  const deployed = await deployTemplate(template, clients, { stackName, region: REGION, accountId: ACCOUNT });
  // The config's secrets are imported (the construct's default): the operator creates them under the
  // deployment's prefix, the stack's SecretPrefix output.
  const { secretPrefix } = stack.docRelay.identity;
  for (const [name, value] of [
    [API_KEY_SECRET_NAME, emulator.apiKey],
    [WEBHOOK_SECRET_NAME, webhookSecret],
  ]) {
    await clients.secretsManager.send(
      new CreateSecretCommand({ Name: `${secretPrefix}${name}`, SecretString: value }),
    );
  }

  const dirs = await buildBundles(stack.docRelay.configFile, functions, join(work, 'bundles'));
  const environments = new Map<DocRelayFunctionName, Record<string, string>>();
  const containers = new Map<DocRelayFunctionName, LambdaContainer>();
  for (const [logicalId, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const variables = deployed.resolve(
      (resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ??
        {},
    ) as Record<string, string>;
    const fn = functions.find((name) => variables.POWERTOOLS_SERVICE_NAME === `${stackName}-${name}`);
    if (fn === undefined) continue;
    const env = {
      ...variables,
      // What the Lambda runtime sets, and AWS_ENDPOINT_URL, the SDK's own variable, pointing at moto.
      AWS_REGION: REGION,
      AWS_DEFAULT_REGION: REGION,
      AWS_LAMBDA_FUNCTION_NAME: logicalId,
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs20.x',
      LAMBDA_TASK_ROOT: dirs.get(fn) as string,
      ...CREDENTIALS,
      AWS_ENDPOINT_URL: moto.url,
      POWERTOOLS_METRICS_DISABLED: 'true',
      PATH: process.env.PATH ?? '',
    };
    environments.set(fn, env);
    containers.set(fn, startContainer(dirs.get(fn) as string, env));
  }
  const missing = functions.filter((fn) => !containers.has(fn));
  if (missing.length > 0) throw new Error(`the template has no function ${missing.join(', ')}`);

  return {
    moto,
    emulator,
    work,
    configPath,
    webhookSecret,
    template,
    deployed,
    environments,
    containers,
    clients,
    stop: async () => {
      await Promise.all([...containers.values()].map((container) => container.stop()));
      for (const client of Object.values(clients)) client.destroy();
      await Promise.all([moto.stop(), emulator.stop()]);
      rmSync(work, { recursive: true, force: true });
    },
  };
}

/** An API Gateway HTTP API (payload 2.0) event. */
export function httpEvent(
  method: string,
  routeKey: string,
  rawPath: string,
  params: Record<string, string>,
  init: { headers?: Record<string, string>; body?: string; rawQueryString?: string } = {},
) {
  return {
    version: '2.0',
    routeKey,
    rawPath,
    rawQueryString: init.rawQueryString ?? '',
    headers: init.headers ?? {},
    pathParameters: params,
    requestContext: {
      accountId: ACCOUNT,
      apiId: 'moto',
      domainName: `moto.execute-api.${REGION}.amazonaws.com`,
      domainPrefix: 'moto',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'aws-tier' },
      requestId: randomBytes(8).toString('hex'),
      routeKey,
      stage: '$default',
      time: '01/Jan/2030:00:00:00 +0000',
      timeEpoch: Date.now(),
    },
    ...(init.body === undefined ? {} : { body: init.body, isBase64Encoded: false }),
  };
}
