/**
 * The dependency builders the Lambda entries and the local stack share, and the one AWS client factory:
 * what each function is built from, with clients that are never sent a request here.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { createAwsClients, createS3Client } from '../../../functions/adapters/aws-clients';
import { DynamoJobRepository } from '../../../functions/adapters/dynamodb/job-table';
import { EventBridgePublisher } from '../../../functions/adapters/eventbridge/event-publisher';
import { InMemoryEventPublisher } from '../../../functions/adapters/memory/event-publisher';
import { StaticSecretSource } from '../../../functions/adapters/memory/secret-source';
import { S3DocumentStore } from '../../../functions/adapters/s3/document-store';
import { SecretsManagerSource } from '../../../functions/adapters/secrets-manager/secret-source';
import { SqsJobQueue } from '../../../functions/adapters/sqs/job-queue';
import { loadBundledConfigSync } from '../../../functions/config/bundled';
import { ConfigFileError } from '../../../functions/config/errors';
import { LAMBDA_ENV } from '../../../functions/config/lambda-env';
import { DocrelayConfigSchema } from '../../../functions/config/schema';
import { DocgenClient } from '../../../functions/docgen/client';
import { buildDocumentService } from '../../../functions/wiring/document-service';
import { buildIngestDeps } from '../../../functions/wiring/ingest';
import { buildJobsApiDeps } from '../../../functions/wiring/jobs-api';
import { lambdaEnvironment } from '../../../functions/wiring/lambda';
import { buildReconcilerDeps } from '../../../functions/wiring/reconciler';
import { buildWorkerDeps } from '../../../functions/wiring/worker';
import { config } from '../core/support';

const clients = createAwsClients({
  region: 'eu-west-1',
  credentials: { accessKeyId: 'AKIDUNITTEST', secretAccessKey: 'unit-test-secret' },
});
const secrets = new StaticSecretSource({ 'unit/api-key': 'key' });

const workerParts = {
  config,
  secrets,
  dynamodb: clients.dynamodb,
  sqs: clients.sqs,
  s3: clients.s3,
  tableName: 'jobs',
  queueUrl: 'https://sqs/jobs',
  dlqUrl: 'https://sqs/dlq',
  bucket: 'documents',
  sealingSecretName: 'unit/sealing',
  maxReceiveCount: 5,
  leaseMs: 60_000,
};

describe('dependency builders', () => {
  it('builds the ingest from the table and the jobs queue', () => {
    const deps = buildIngestDeps({ ...workerParts });
    expect(deps.jobs).toBeInstanceOf(DynamoJobRepository);
    expect(deps.queue).toBeInstanceOf(SqsJobQueue);
    expect(deps.sealingSecretName).toBe('unit/sealing');
  });

  it('builds the jobs API and the reconciler', () => {
    const api = buildJobsApiDeps({ ...workerParts });
    expect(api.store).toBeInstanceOf(S3DocumentStore);
    expect((api.store as S3DocumentStore).bucket).toBe('documents');
    const reconciler = buildReconcilerDeps({ ...workerParts });
    expect(reconciler).toMatchObject({ leaseMs: 60_000 });
    expect((reconciler.queue as SqsJobQueue).queueUrl).toBe('https://sqs/jobs');
  });

  it('builds the worker with EventBridge events, and the two queues apart', () => {
    const deps = buildWorkerDeps({
      ...workerParts,
      eventBridge: clients.eventBridge,
      eventBusName: 'bus',
      partSize: 5 * 1024 * 1024,
      retryBaseSeconds: 2,
      outageBudgetMs: 1_000,
      docgenBaseUrl: 'http://127.0.0.1:9001',
      docgenRetryBudgetMs: 500,
    });
    expect(deps.worker.events).toBeInstanceOf(EventBridgePublisher);
    expect(deps.worker.docgen).toBeInstanceOf(DocgenClient);
    expect(deps.worker).toMatchObject({ maxReceiveCount: 5, retryBaseSeconds: 2, outageBudgetMs: 1_000 });
    expect((deps.queue as SqsJobQueue).queueUrl).toBe('https://sqs/jobs');
    expect((deps.deadLetters as SqsJobQueue).queueUrl).toBe('https://sqs/dlq');
  });

  it('takes a given event publisher (the local stack), and needs one or an EventBridge client', () => {
    const events = new InMemoryEventPublisher();
    expect(buildWorkerDeps({ ...workerParts, events }).worker.events).toBe(events);
    expect(() => buildWorkerDeps(workerParts)).toThrow(
      'the worker needs an EventBridge client or an event publisher',
    );
  });

  it('reads the service key from the secret source and refreshes it there', async () => {
    const source = new StaticSecretSource({ 'unit/api-key': 'key' });
    const { docgen, templates } = buildDocumentService(config, source);
    expect(docgen).toBeInstanceOf(DocgenClient);
    expect(typeof templates.getTemplate).toBe('function');
  });
});

describe('AWS clients', () => {
  it('point S3 at a local endpoint path-style, with checksums only when required', async () => {
    const s3 = createS3Client({ region: 'us-east-1', endpoints: { s3: 'http://127.0.0.1:4569' } });
    expect(s3).toBeInstanceOf(S3Client);
    expect(s3.config.forcePathStyle).toBe(true);
    expect(await s3.config.requestChecksumCalculation()).toBe('WHEN_REQUIRED');
    expect(await s3.config.region()).toBe('us-east-1');
  });

  it('leave the endpoints to the SDK on AWS', async () => {
    const s3 = createS3Client();
    expect(s3.config.forcePathStyle).toBeFalsy();
    expect(await s3.config.requestChecksumCalculation()).toBe('WHEN_SUPPORTED');
  });

  it('create one client of each kind, at the given endpoints', async () => {
    const local = createAwsClients({
      region: 'us-east-1',
      endpoints: { sqs: 'http://127.0.0.1:9324', dynamodb: 'http://127.0.0.1:8000' },
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    });
    expect(await local.sqs.config.endpoint?.()).toMatchObject({ hostname: '127.0.0.1', port: 9324 });
    expect(await local.dynamodb.config.endpoint?.()).toMatchObject({ hostname: '127.0.0.1', port: 8000 });
    expect(await local.secretsManager.config.credentials()).toMatchObject({ accessKeyId: 'a' });
    expect(await local.eventBridge.config.region()).toBe('us-east-1');
  });
});

describe('a Lambda container starting point', () => {
  let dir: string;
  const saved = { ...process.env };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'docrelay-wiring-'));
  });

  afterEach(async () => {
    process.env = { ...saved };
    await rm(dir, { recursive: true, force: true });
  });

  // What the construct bundles: the configuration as validated at synth, defaults filled.
  const bundled = DocrelayConfigSchema.parse({
    service: { baseUrl: 'https://docs.example.com', apiKeySecret: 'docrelay/key' },
    integrations: [
      {
        id: 'x',
        verify: { scheme: 'github', secret: 's' },
        documents: [{ name: 'r', template: { id: '7001' }, data: { T: 'name' } }],
      },
    ],
  });

  it('reads the bundled configuration and opens Secrets Manager', async () => {
    const path = join(dir, 'docrelay.config.json');
    await writeFile(path, JSON.stringify(bundled));
    process.env = {
      ...saved,
      AWS_REGION: 'eu-west-1',
      [LAMBDA_ENV.configPath]: path,
      [LAMBDA_ENV.tableName]: 'jobs',
      [LAMBDA_ENV.queueUrl]: 'https://sqs/jobs',
      [LAMBDA_ENV.dlqUrl]: 'https://sqs/dlq',
      [LAMBDA_ENV.bucket]: 'documents',
    };
    const environment = lambdaEnvironment();
    expect(environment.settings.tableName).toBe('jobs');
    expect(environment.config.integrations.has('x')).toBe(true);
    expect(environment.secrets).toBeInstanceOf(SecretsManagerSource);
  });

  it('refuses a bundled configuration that is not JSON, or not shaped as the construct writes it', async () => {
    const broken = join(dir, 'broken.json');
    await writeFile(broken, '{');
    expect(() => loadBundledConfigSync(broken)).toThrow(ConfigFileError);
    const invalid = join(dir, 'invalid.json');
    const { storage: _storage, ...unvalidated } = bundled;
    await writeFile(invalid, JSON.stringify({ ...unvalidated, integrations: 'x' }));
    expect(() => loadBundledConfigSync(invalid)).toThrow(/storage: needs keyPattern.*|2 problems/);
  });

  it('compiles a bundled expression on its first use (checked at synth), a syntax error then', async () => {
    const bad = join(dir, 'bad-expression.json');
    const integration = { ...bundled.integrations[0], deliveryId: '$$$(' };
    await writeFile(bad, JSON.stringify({ ...bundled, integrations: [integration] }));
    const loaded = loadBundledConfigSync(bad);
    const rule = loaded.integrations.get('x')?.rules[0];
    expect(await rule?.data[0]?.expression.expression.evaluate({ name: 'Ada' })).toBe('Ada');
    expect(() => loaded.integrations.get('x')?.deliveryId?.expression).toThrow();
  });
});
