/**
 * `docrelay smoke --stack` against a deployment on moto: the CLI runs as a separate process with nothing but
 * AWS's own variables (AWS_ENDPOINT_URL, region, credentials) pointing it at moto, reads the stack's outputs
 * from CloudFormation, the signing secret from Secrets Manager, posts to the webhook front (API Gateway's
 * part, invoking the ingest bundle), while the worker bundle is fed from the queue; then checks the object
 * against S3's SHA-256 and deletes the version it wrote and the delivery's table items.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { CloudFormationClient, CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { ListObjectVersionsCommand } from '@aws-sdk/client-s3';
import { CreateSecretCommand } from '@aws-sdk/client-secrets-manager';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { CREDENTIALS, deployOnMoto, type MotoDeployment, REGION } from './deployed-stack';
import type { LambdaContainer } from './lambda-container';
import { pollWorker, startWebhookFront } from './lambda-events';

jest.setTimeout(120_000);

const run = promisify(execFile);
const root = resolve(__dirname, '../..');
const STACK = 'DocRelaySmoke';

let stack: MotoDeployment;
let front: { url: string; close(): Promise<void> };

beforeAll(async () => {
  stack = await deployOnMoto(STACK, ['ingest', 'worker'], ['smoke: { payload: note.json }']);
  writeFileSync(
    join(stack.work, 'note.json'),
    JSON.stringify({ type: 'note.created', data: { title: 'Smoke', body: 'after a deploy' } }),
  );
  front = await startWebhookFront(stack.containers.get('ingest') as LambdaContainer);
  // The stack's outputs as CloudFormation keeps them: the synthesized ones, resolved, with the front as ApiUrl.
  const outputs = Object.entries(
    (stack.template as unknown as { Outputs: Record<string, { Value: unknown }> }).Outputs,
  ).flatMap(([key, output]) => {
    if (key === 'ApiUrl') return [{ key, value: front.url }];
    try {
      return [{ key, value: String(stack.deployed.resolve(output.Value)) }];
    } catch {
      return []; // outputs of resources the deployer does not create (the API, the alarm topic)
    }
  });
  const cloudFormation = new CloudFormationClient({
    region: REGION,
    endpoint: stack.moto.url,
    credentials: {
      accessKeyId: CREDENTIALS.AWS_ACCESS_KEY_ID,
      secretAccessKey: CREDENTIALS.AWS_SECRET_ACCESS_KEY,
    },
  });
  await cloudFormation.send(
    new CreateStackCommand({
      StackName: STACK,
      TemplateBody: JSON.stringify({
        Resources: { Handle: { Type: 'AWS::CloudFormation::WaitConditionHandle' } },
        Outputs: Object.fromEntries(outputs.map(({ key, value }) => [key, { Value: value }])),
      }),
    }),
  );
  cloudFormation.destroy();
}, 240_000);

afterAll(async () => {
  await front?.close();
  await stack?.stop();
});

/** `docrelay smoke` in a process of its own, pointed at moto by AWS's own variables only. */
async function smoke(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: stack.work,
    AWS_ENDPOINT_URL: stack.moto.url,
    AWS_REGION: REGION,
    AWS_ACCESS_KEY_ID: CREDENTIALS.AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY: CREDENTIALS.AWS_SECRET_ACCESS_KEY,
    AWS_CONFIG_FILE: join(stack.work, 'no-aws-config'),
    AWS_SHARED_CREDENTIALS_FILE: join(stack.work, 'no-aws-credentials'),
    DOCRELAY_CONFIG: stack.configPath,
    DOCRELAY_DATA_DIR: join(stack.work, 'no-local-stack'),
  };
  const worker = pollWorker(stack, stack.containers.get('worker') as LambdaContainer);
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      [join(root, 'bin/docrelay.js'), 'smoke', ...args],
      {
        cwd: root,
        env,
      },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  } finally {
    await worker.stop();
  }
}

/** The table's delivery and job items: the worker's learned link lifetime (`kind: service`) outlives them. */
async function tableItems(): Promise<Record<string, unknown>[]> {
  const table = stack.environments.get('worker')?.DOCRELAY_TABLE as string;
  const { Items = [] } = await DynamoDBDocumentClient.from(stack.clients.dynamodb).send(
    new ScanCommand({ TableName: table, ConsistentRead: true }),
  );
  return Items.filter((item) => item.kind !== 'service');
}

describe('docrelay smoke --stack, on moto', () => {
  it("stores the marked sample, matches S3's SHA-256, deletes the version it wrote and the table items", async () => {
    const result = await smoke(['--stack', STACK]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(
      `smoke test of stack ${STACK}: integration notes, payload ${join(stack.work, 'note.json')}`,
    );
    expect(lines[1]).toMatch(
      new RegExp(`^POST ${front.url}/v1/hooks/notes: 202 Accepted, delivery smoke-\\S+, 1 job\\(s\\)$`),
    );
    expect(lines[2]).toMatch(/^job \S+: stored after \d+\.\d s, 1 file\(s\)$/);
    expect(lines[3]).toMatch(/^ {2}s3:\/\/\S+: \d+ bytes, match the job's SHA-256 and S3's checksum$/);
    expect(lines.slice(4)).toEqual([
      'cleaned up: 1 object(s) and 2 job table item(s) deleted',
      'smoke test passed',
    ]);

    // The bucket is versioned: no version and no delete marker is left of the object.
    const bucket = stack.environments.get('worker')?.DOCRELAY_BUCKET as string;
    const versions = await stack.clients.s3.send(new ListObjectVersionsCommand({ Bucket: bucket }));
    expect([...(versions.Versions ?? []), ...(versions.DeleteMarkers ?? [])]).toEqual([]);
    expect(await tableItems()).toEqual([]);
  });

  it('a signing secret the stack does not hold: the webhook refuses it, exit 1, nothing made', async () => {
    await stack.clients.secretsManager.send(
      new CreateSecretCommand({ Name: 'aws-tier/other-webhook', SecretString: `whsec_${'A'.repeat(32)}` }),
    );
    const result = await smoke(['--stack', STACK, '--secret-name', 'aws-tier/other-webhook']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /^POST \S+: 401 Unauthorized\nthe webhook did not accept a new delivery: 401 .+\nsmoke test FAILED\n$/m,
    );
    expect(await tableItems()).toEqual([]);
  });
});
