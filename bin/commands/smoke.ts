/**
 * `docrelay smoke`: sends one signed test delivery to the stack's webhook URL, waits until its jobs are
 * stored, checks each object's SHA-256 against the job record and S3's checksum, then deletes what it made.
 * A failed run deletes nothing, so `docrelay jobs show` can explain it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { DeleteObjectCommand, GetObjectCommand, type GetObjectCommandOutput } from '@aws-sdk/client-s3';
import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoJobRepository } from '../../functions/adapters/dynamodb/job-table';
import { jobKey } from '../../functions/adapters/dynamodb/keys';
import { FileSecretSource } from '../../functions/adapters/local/file-secret-source';
import { SecretsManagerSource } from '../../functions/adapters/secrets-manager/secret-source';
import { readLocalSettings } from '../../functions/commons/env';
import type { CompiledIntegration, LoadedConfig } from '../../functions/config/compile';
import { JOB_TABLE } from '../../functions/config/table-contract';
import type { JobRecord } from '../../functions/core/job';
import type { SecretSource } from '../../functions/ports/secret-source';
import { senderScheme } from '../../functions/senders';
import { secretPrefixOf } from './deployed-secrets';
import { contentTypeOf, findIntegration, firstLine, loadConfigOrExplain, readInputFile } from './ops-args';
import { describeProblem, jobIdsOf, postSigned } from './signed-post';
import { readStackOutputs, targetVariables } from './stack-outputs';
import { AWS_TARGET_VARIABLES, resolveStackTarget, type StackTarget } from './stack-target';
import { CliError, type CommandContext } from './types';

/** What `docrelay smoke` takes. */
export interface SmokeOptions {
  readonly stack: string;
  readonly local?: boolean;
  readonly integration?: string;
  readonly payload?: string;
  readonly secretName?: string;
  readonly timeout: number;
  readonly keep?: boolean;
}

/** How often the job table is read while waiting. */
const POLL_MS = 500;

/** Where the test delivery goes, and how the CLI reaches the stack's table, bucket and secrets. */
interface SmokeTarget {
  readonly label: string;
  readonly stack: StackTarget;
  readonly apiUrl: string;
  readonly secrets: SecretSource;
  /** The name the stack reads a config secret by. */
  readonly secretName: (configName: string) => string;
}

/** Runs the smoke test; resolves to 0 when every job was stored and every object matched, else 1. */
export async function smoke(ctx: CommandContext, options: SmokeOptions): Promise<number> {
  const settings = readLocalSettings(ctx.env, ctx.cwd);
  const loaded = await loadConfigOrExplain(settings.configPath);
  const integration = smokeIntegration(loaded, options.integration);
  const verify = integration.config.verify;
  if (verify === undefined) {
    throw new CliError(
      `integration "${integration.id}" takes EventBridge events, not webhooks: smoke needs one with verify`,
    );
  }
  const marked = integration.config.smoke?.payload;
  if (options.payload === undefined && marked === undefined) {
    throw new CliError(
      `integration "${integration.id}" has no smoke: { payload } in the config: give --payload <file>`,
      2,
    );
  }
  const payloadFile =
    options.payload === undefined
      ? resolve(dirname(settings.configPath), marked as string)
      : resolve(ctx.cwd, options.payload);
  const payload = await readInputFile(ctx.cwd, payloadFile, 'payload');
  const target = await smokeTarget(ctx, options);
  const out = (line: string): void => {
    ctx.stdout.write(`${line}\n`);
  };
  try {
    const names =
      verify.secret === undefined ? [] : Array.isArray(verify.secret) ? verify.secret : [verify.secret];
    const secretName =
      names[0] === undefined ? undefined : (options.secretName ?? target.secretName(names[0]));
    const secrets = secretName === undefined ? [] : [await readSecret(target.secrets, secretName)];
    // A recognisable id where the scheme takes it from a header; other schemes take theirs from the body.
    const idSource = senderScheme(verify.scheme)?.deliveryId;
    const deliveryId = idSource !== undefined && 'header' in idSource ? `smoke-${randomUUID()}` : undefined;
    const url = new URL(
      `${target.apiUrl.replace(/\/+$/, '')}/v1/hooks/${encodeURIComponent(integration.id)}`,
    );
    out(`smoke test of ${target.label}: integration ${integration.id}, payload ${payloadFile}`);
    const started = Date.now();
    const answer = await postSigned({
      url,
      verify,
      secrets,
      payload,
      contentType: contentTypeOf(payloadFile),
      userAgent: 'docrelay-smoke',
      ...(deliveryId === undefined ? {} : { deliveryId }),
    });
    const jobIds = jobIdsOf(answer.body);
    const delivery = (answer.body as { deliveryId?: unknown } | undefined)?.deliveryId;
    out(
      `POST ${url}: ${answer.status} ${answer.reason}${answer.status === 202 ? `, delivery ${String(delivery)}, ${jobIds.length} job(s)` : ''}`,
    );
    if (answer.status !== 202 || jobIds.length === 0 || typeof delivery !== 'string') {
      return fail(
        out,
        `the webhook did not accept a new delivery: ${refusal(answer.status, answer.body, answer.reason)}`,
      );
    }

    const store = new DynamoJobRepository(target.stack.clients.dynamodb, target.stack.tableName);
    const jobs = await waitForFinal(store, jobIds, options.timeout * 1000);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    let ok = true;
    const objects: StoredObject[] = [];
    for (const jobId of jobIds) {
      const job = jobs.get(jobId);
      if (job?.status !== 'stored') {
        ok = false;
        const error = job?.error ?? job?.lastError;
        const state =
          job?.status === 'failed'
            ? 'failed'
            : `still ${job?.status ?? 'missing'} after ${options.timeout} s (--timeout)`;
        out(
          `job ${jobId}: ${state}${error === undefined ? '' : ` (${error.code}: ${error.message.replace(/\s+/g, ' ')})`}`,
        );
        continue;
      }
      out(`job ${jobId}: stored after ${seconds} s, ${job.files.length} file(s)`);
      for (const file of job.files) {
        const check = await checkObject(target.stack, file);
        ok &&= check.ok;
        if (check.stored !== undefined) objects.push(check.stored);
        out(`  ${check.line}`);
      }
    }
    if (!ok) {
      return fail(
        out,
        `left in place for inspection: delivery ${delivery}, jobs ${jobIds.join(', ')} (docrelay jobs show <jobId>)`,
      );
    }
    if (options.keep === true) {
      out(`kept: delivery ${delivery}, jobs ${jobIds.join(', ')} and their objects (--keep)`);
    } else {
      out(await cleanUp(target.stack, delivery, jobIds, objects));
    }
    out('smoke test passed');
    return 0;
  } finally {
    target.stack.close();
  }
}

/** Why a 2xx or other answer made no new job, on one line. */
function refusal(status: number, body: unknown, reason: string): string {
  if (status < 200 || status > 299) return `${status} ${describeProblem(body, reason)}`;
  if ((body as { duplicate?: unknown } | undefined)?.duplicate === true)
    return 'it was answered as a duplicate';
  return 'it made no job: does the payload match a document rule of the integration?';
}

function fail(out: (line: string) => void, line: string): number {
  out(line);
  out('smoke test FAILED');
  return 1;
}

/** --integration, else the first integration the config marks with `smoke`. */
function smokeIntegration(loaded: LoadedConfig, id: string | undefined): CompiledIntegration {
  if (id !== undefined) return findIntegration(loaded, id);
  const marked = [...loaded.integrations.values()].find(
    (integration) => integration.config.smoke !== undefined,
  );
  if (marked === undefined) {
    throw new CliError(
      'no integration is marked for the smoke test: add smoke: { payload: <file> } to one in the config, or give --integration and --payload',
      2,
    );
  }
  return marked;
}

async function smokeTarget(ctx: CommandContext, options: SmokeOptions): Promise<SmokeTarget> {
  if (options.local === true) {
    // The running local stack, whatever AWS variables the shell has.
    const env = { ...ctx.env };
    for (const name of AWS_TARGET_VARIABLES) delete env[name];
    const stack = await resolveStackTarget({ ...ctx, env });
    if (stack.apiUrl === undefined) {
      stack.close();
      throw new CliError('the local stack serves no HTTP API: start it with npm start');
    }
    const settings = readLocalSettings(ctx.env, ctx.cwd);
    return {
      label: `the local stack (${stack.apiUrl})`,
      stack,
      apiUrl: stack.apiUrl,
      secrets: new FileSecretSource(settings.secretsFile),
      secretName: (name) => name,
    };
  }
  const stackName = options.stack.trim();
  if (stackName === '') throw new CliError('--stack <name> must name a deployed docrelay stack', 2);
  const region = ctx.env.AWS_REGION ?? ctx.env.AWS_DEFAULT_REGION;
  const outputs = await readStackOutputs(stackName, region);
  const apiUrl = outputs.ApiUrl;
  if (apiUrl === undefined)
    throw new CliError(`stack ${stackName} has no output ApiUrl: is it a docrelay stack?`);
  const stack = await resolveStackTarget({
    ...ctx,
    env: { ...ctx.env, ...targetVariables(stackName, outputs) },
  });
  return {
    label: `stack ${stackName}`,
    stack,
    apiUrl,
    secrets: new SecretsManagerSource(stack.clients.secretsManager),
    secretName: (name) => createdSecretName(outputs, name),
  };
}

/**
 * The Secrets Manager name of a config secret: a secret the stack created is prefixed per deployment, and its
 * `SetSecret…` output names it (`--secret-id <name>`); any other carries the stack's `SecretPrefix`.
 */
export function createdSecretName(outputs: Readonly<Record<string, string>>, configName: string): string {
  for (const [key, value] of Object.entries(outputs)) {
    if (!key.startsWith('SetSecret')) continue;
    const name = /--secret-id (\S+)/.exec(value)?.[1];
    if (name !== undefined && (name === configName || name.endsWith(`/${configName}`))) return name;
  }
  return `${secretPrefixOf(outputs)}${configName}`;
}

async function readSecret(source: SecretSource, name: string): Promise<string> {
  try {
    return await source.get(name);
  } catch (error) {
    throw new CliError(
      `cannot read the signing secret ${name}: ${firstLine(error)} (--secret-name names another)`,
    );
  }
}

/** Reads the jobs until each is stored or failed, or the time is up; the last records read. */
async function waitForFinal(
  store: DynamoJobRepository,
  jobIds: readonly string[],
  timeoutMs: number,
): Promise<Map<string, JobRecord>> {
  const deadline = Date.now() + timeoutMs;
  const jobs = new Map<string, JobRecord>();
  for (;;) {
    for (const jobId of jobIds) {
      const job = await store.getJob(jobId);
      if (job !== undefined) jobs.set(jobId, job);
    }
    const open = jobIds.filter((id) => !['stored', 'failed'].includes(jobs.get(id)?.status ?? ''));
    if (open.length === 0 || Date.now() >= deadline) return jobs;
    await new Promise((done) => setTimeout(done, POLL_MS));
  }
}

/** An object a smoke job stored, with the version it wrote on a versioned bucket. */
interface StoredObject {
  readonly bucket: string;
  readonly key: string;
  readonly versionId?: string;
}

/** Downloads a stored object and compares its SHA-256 with the job record's and S3's own checksum. */
async function checkObject(
  stack: StackTarget,
  file: JobRecord['files'][number],
): Promise<{ ok: boolean; line: string; stored?: StoredObject }> {
  const where = `s3://${file.bucket}/${file.key}`;
  if (file.bucket === undefined || file.key === undefined || file.sha256 === undefined) {
    return { ok: false, line: `${where}: the job records no stored object or hash` };
  }
  let object: GetObjectCommandOutput;
  try {
    object = await stack.clients.s3.send(
      new GetObjectCommand({ Bucket: file.bucket, Key: file.key, ChecksumMode: 'ENABLED' }),
    );
  } catch (error) {
    return { ok: false, line: `${where}: cannot read it (${firstLine(error)})` };
  }
  const bytes = (await object.Body?.transformToByteArray()) ?? new Uint8Array();
  const digest = createHash('sha256').update(bytes).digest();
  const problems: string[] = [];
  if (digest.toString('hex') !== file.sha256) problems.push("its SHA-256 is not the job's");
  if (file.storedSize !== undefined && bytes.length !== file.storedSize) {
    problems.push(`${bytes.length} bytes, the job says ${file.storedSize}`);
  }
  // A multipart upload's checksum is of its parts ("<base64>-<parts>"): not comparable with the whole's hash.
  const s3Sum = object.ChecksumSHA256;
  const composite = object.ChecksumType === 'COMPOSITE' || (s3Sum?.includes('-') ?? false);
  const comparable = s3Sum !== undefined && !composite;
  if (comparable && s3Sum !== digest.toString('base64')) problems.push("S3's SHA-256 checksum differs");
  const checked = comparable
    ? "the job's SHA-256 and S3's checksum"
    : s3Sum === undefined
      ? "the job's SHA-256 (S3 keeps no SHA-256 for it)"
      : "the job's SHA-256 (S3 keeps a checksum of the upload's parts)";
  const stored = { bucket: file.bucket, key: file.key, versionId: object.VersionId };
  return problems.length === 0
    ? { ok: true, line: `${where}: ${bytes.length} bytes, match ${checked}`, stored }
    : { ok: false, line: `${where}: ${problems.join('; ')}`, stored };
}

/** Deletes the objects the jobs stored (the versions they wrote) and the delivery's items in the job table. */
async function cleanUp(
  stack: StackTarget,
  deliveryId: string,
  jobIds: readonly string[],
  objects: readonly StoredObject[],
): Promise<string> {
  for (const object of objects) {
    // On a versioned bucket a plain delete only adds a delete marker: delete the version the job wrote.
    const version =
      object.versionId === undefined || object.versionId === 'null' ? {} : { VersionId: object.versionId };
    await stack.clients.s3.send(
      new DeleteObjectCommand({ Bucket: object.bucket, Key: object.key, ...version }),
    );
  }
  // The jobs by their ids; the delivery (and jobs written by older releases) through the by-delivery index.
  const keys = new Set<string>(jobIds.map(jobKey));
  let cursor: Record<string, unknown> | undefined;
  for (let page = 0; page < 10; page += 1) {
    const answer = await stack.clients.dynamodb.send(
      new QueryCommand({
        TableName: stack.tableName,
        IndexName: JOB_TABLE.byDeliveryIndex,
        KeyConditionExpression: '#d = :d',
        ExpressionAttributeNames: { '#d': JOB_TABLE.deliveryIdKey },
        ExpressionAttributeValues: { ':d': deliveryId },
        ...(cursor === undefined ? {} : { ExclusiveStartKey: cursor }),
      }),
    );
    for (const item of answer.Items ?? []) keys.add(String(item[JOB_TABLE.partitionKey]));
    cursor = answer.LastEvaluatedKey;
    if (cursor === undefined) break;
  }
  for (const key of keys) {
    await stack.clients.dynamodb.send(
      new DeleteCommand({ TableName: stack.tableName, Key: { [JOB_TABLE.partitionKey]: key } }),
    );
  }
  return `cleaned up: ${objects.length} object(s) and ${keys.size} job table item(s) deleted`;
}
