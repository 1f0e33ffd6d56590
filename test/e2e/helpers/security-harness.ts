/**
 * What the security suites share: a test configuration with one integration per verification scheme, an
 * in-process local stack over it (workers optional), a raw HTTP client (node:http, so that paths, methods and
 * headers go out exactly as written, with no URL normalisation nor default content type), signers for every
 * scheme, and probes of what the stack holds (table items, queue depth).
 */
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, ScanCommand, type ScanCommandOutput } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { readLocalSettings } from '../../../functions/commons/env';
import type { LogLevel } from '../../../functions/commons/observability';
import { loadConfigFile } from '../../../functions/config/load';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../../local/stack/aws-emulators';
import { type LocalStack, startLocalStack } from '../../../local/stack/local-stack';

/** The repository root. */
export const securityRepoRoot = resolve(__dirname, '../../..');

/** Integration ids of the security configuration: distinctive, so a 404 that names one is easy to catch. */
export const SEC = {
  github: 'sec-github',
  stripe: 'sec-stripe',
  shopify: 'sec-shopify',
  slack: 'sec-slack',
  standard: 'sec-standard',
  hmac: 'sec-hmac',
  token: 'sec-token',
  events: 'sec-events',
  mapFail: 'sec-mapfail',
} as const;

/** Secret names of the security configuration (GitHub has two: a rotation in progress). */
export const SECRET_NAMES = {
  githubOld: 'sec/github-old',
  githubNew: 'sec/github-new',
  stripe: 'sec/stripe-signing',
  shopify: 'sec/shopify-signing',
  slack: 'sec/slack-signing',
  // "standard" in the name: the local stack creates a whsec_ value for it.
  standard: 'sec/standard-webhooks',
  hmac: 'sec/hmac-signing',
  token: 'sec/token-value',
  mapFail: 'sec/mapfail-signing',
} as const;

/** The maximum body of the security configuration (small, so that 413 is cheap to reach). */
export const SEC_MAX_BODY_BYTES = 262_144;

const noteRule = `
      - name: note
        when: "type = 'note.created'"
        template: { id: "9003" }
        data:
          Title: "title"
          Body: "body"`;

/** The security configuration: every webhook scheme once, an events-only integration, a failing mapping. */
export function securityConfigYaml(maxBodyBytes: number = SEC_MAX_BODY_BYTES): string {
  return `service:
  baseUrl: https://docs.example.com
  apiKeySecret: docrelay/service-api-key
  maxConcurrency: 2
  timeoutSeconds: 10
ingest:
  maxBodyBytes: ${maxBodyBytes}
integrations:
  - id: ${SEC.github}
    verify: { scheme: github, secret: ["${SECRET_NAMES.githubOld}", "${SECRET_NAMES.githubNew}"] }
    documents:${noteRule}
  - id: ${SEC.stripe}
    verify: { scheme: stripe, secret: "${SECRET_NAMES.stripe}" }
    documents:${noteRule}
  - id: ${SEC.shopify}
    verify: { scheme: shopify, secret: "${SECRET_NAMES.shopify}" }
    documents:${noteRule}
  - id: ${SEC.slack}
    verify: { scheme: slack, secret: "${SECRET_NAMES.slack}" }
    documents:${noteRule}
  - id: ${SEC.standard}
    verify: { scheme: standard-webhooks, secret: "${SECRET_NAMES.standard}" }
    documents:${noteRule}
  - id: ${SEC.hmac}
    verify: { scheme: hmac-sha256, secret: "${SECRET_NAMES.hmac}", header: X-Signature, encoding: hex, prefix: "sha256=" }
    documents:${noteRule}
  - id: ${SEC.token}
    verify: { scheme: token, secret: "${SECRET_NAMES.token}" }
    documents:${noteRule}
  - id: ${SEC.mapFail}
    verify: { scheme: github, secret: "${SECRET_NAMES.mapFail}" }
    documents:
      - name: note
        template: { id: "9003" }
        data:
          Title: "no.such.field"
  - id: ${SEC.events}
    eventBridge: { eventPattern: { source: ["sec.test"] } }
    documents:
      - name: note
        template: { id: "9003" }
        data:
          Title: "detail.title"
`;
}

/** Every integration id a 404 must not reveal. */
export const CONFIGURED_IDS: readonly string[] = Object.values(SEC);

// ------------------------------------------------------------------------------------------------- HTTP

import { type RawRequest, type RawResponse, rawRequest } from './raw-http';

export { type RawRequest, type RawResponse, rawRequest };

/** A problem+json body. */
export interface ProblemBody {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
}

/** Parses a problem+json answer; throws (failing the test) when it is not one. */
export function problemOf(response: RawResponse): ProblemBody {
  const contentType = response.headers['content-type'] ?? '';
  if (!contentType.startsWith('application/problem+json')) {
    throw new Error(
      `expected application/problem+json, got "${contentType}": ${response.text.slice(0, 300)}`,
    );
  }
  const parsed: unknown = JSON.parse(response.text);
  if (parsed === null || typeof parsed !== 'object') throw new Error(`problem body is not an object`);
  const body = parsed as Record<string, unknown>;
  for (const field of ['type', 'title', 'detail'] as const) {
    if (typeof body[field] !== 'string' || body[field] === '') {
      throw new Error(`problem field ${field} missing or empty: ${response.text.slice(0, 300)}`);
    }
  }
  if (body.status !== response.status) {
    throw new Error(`problem status ${String(body.status)} differs from HTTP ${response.status}`);
  }
  return {
    type: body.type as string,
    title: body.title as string,
    status: body.status as number,
    detail: body.detail as string,
  };
}

// ------------------------------------------------------------------------------------------------ signing

/** Headers of a signed request, content type included. */
export type Headers = Record<string, string>;

// Only the signing helper of the Stripe library is used: this client never makes a request.
const stripe = new Stripe('sk_test_unused');

const JSON_TYPE = { 'content-type': 'application/json' } as const;
const nowSeconds = (at: Date = new Date()): number => Math.floor(at.getTime() / 1000);

/** GitHub: `X-Hub-Signature-256: sha256=<hex>`. */
export const signGithubBody = (body: Buffer, secret: string, deliveryId: string = randomUUID()): Headers => ({
  ...JSON_TYPE,
  'x-github-event': 'note',
  'x-github-delivery': deliveryId,
  'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
});

/** Stripe: the Stripe library's own test header (`t=…,v1=…`), optionally at another time. */
export const signStripeBody = (body: Buffer, secret: string, at?: Date): Headers => ({
  ...JSON_TYPE,
  'stripe-signature': stripe.webhooks.generateTestHeaderString({
    payload: body.toString('utf8'),
    secret,
    ...(at === undefined ? {} : { timestamp: nowSeconds(at) }),
  }),
});

/** Shopify: `X-Shopify-Hmac-Sha256: <base64>`. */
export const signShopifyBody = (body: Buffer, secret: string, webhookId: string = randomUUID()): Headers => ({
  ...JSON_TYPE,
  'x-shopify-topic': 'orders/paid',
  'x-shopify-event-id': randomUUID(),
  'x-shopify-webhook-id': webhookId,
  'x-shopify-hmac-sha256': createHmac('sha256', secret).update(body).digest('base64'),
});

/** Slack: `X-Slack-Signature: v0=<hex of v0:{ts}:{body}>` and `X-Slack-Request-Timestamp`. */
export const signSlackBody = (body: Buffer, secret: string, at: Date = new Date()): Headers => {
  const ts = String(nowSeconds(at));
  const mac = createHmac('sha256', secret).update(`v0:${ts}:`).update(body).digest('hex');
  return { ...JSON_TYPE, 'x-slack-request-timestamp': ts, 'x-slack-signature': `v0=${mac}` };
};

/** Standard Webhooks through the `standardwebhooks` package. */
export const signStandardBody = (
  body: Buffer,
  secret: string,
  id: string = `msg_${randomUUID()}`,
  at: Date = new Date(),
): Headers => ({
  ...JSON_TYPE,
  'webhook-id': id,
  'webhook-timestamp': String(nowSeconds(at)),
  'webhook-signature': new Webhook(secret).sign(id, at, body.toString('utf8')),
});

/** The generic HMAC of the security configuration: `X-Signature: sha256=<hex>`. */
export const signHmacBody = (body: Buffer, secret: string): Headers => ({
  ...JSON_TYPE,
  'x-signature': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
});

/** The token scheme: `Authorization: Bearer <token>`. */
export const signTokenBody = (_body: Buffer, secret: string): Headers => ({
  ...JSON_TYPE,
  authorization: `Bearer ${secret}`,
});

/** A note body the security configuration turns into one job; unique per call. */
export function noteBody(extra: Record<string, unknown> = {}): Buffer {
  const id = randomUUID();
  return Buffer.from(
    JSON.stringify({
      id: `evt_${id.replace(/-/g, '')}`,
      event_id: `Ev${id.replace(/-/g, '').slice(0, 12)}`,
      type: 'note.created',
      title: `Security note ${id.slice(0, 8)}`,
      body: 'Nothing to see here.',
      ...extra,
    }),
  );
}

// ------------------------------------------------------------------------------------------------ stack

/** An in-process local stack over the security configuration. */
export interface SecurityStack {
  readonly stack: LocalStack;
  readonly url: string;
  readonly dataDir: string;
  /** Every value of the stack's secrets file, by name. */
  readonly secrets: Readonly<Record<string, string>>;
  /** A secret's value (throws when absent). */
  secret(name: string): string;
  /** Every item of the table, unmarshalled. */
  scanTable(): Promise<Array<Record<string, unknown>>>;
  /** Messages in the jobs queue: visible plus in flight plus delayed. */
  queueDepth(): Promise<number>;
  dispose(): Promise<void>;
}

/** Options of the security stack. */
export interface SecurityStackOptions {
  readonly yaml?: string;
  readonly startWorkers?: boolean;
  readonly logLevel?: LogLevel;
}

/** Starts the local stack in-process on loopback with a fresh data directory and the security config. */
export async function startSecurityStack(options: SecurityStackOptions = {}): Promise<SecurityStack> {
  const dataDir = await mkdtemp(join(tmpdir(), 'docrelay-sec-'));
  const configPath = join(dataDir, 'security.yaml');
  await writeFile(configPath, options.yaml ?? securityConfigYaml());
  const settings = readLocalSettings(
    { PORT: '0', DOCRELAY_DATA_DIR: dataDir, DOCRELAY_CONFIG: configPath },
    securityRepoRoot,
  );
  const stack = await startLocalStack({
    settings,
    config: await loadConfigFile(configPath),
    logLevel: options.logLevel ?? 'SILENT',
    startWorkers: options.startWorkers ?? false,
    visibilityTimeoutSeconds: 3,
    maxReceiveCount: 3,
    retryBaseSeconds: 1,
    reconcileIntervalMs: 600_000,
  });
  const secrets = JSON.parse(await readFile(settings.secretsFile, 'utf8')) as Record<string, string>;
  const client = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const dynamodb = new DynamoDBClient({ ...client, endpoint: stack.aws.endpoints.dynamodb });
  const sqs = new SQSClient({ ...client, endpoint: stack.aws.endpoints.sqs });
  return {
    stack,
    url: stack.url,
    dataDir,
    secrets,
    secret: (name) => {
      const value = secrets[name];
      if (value === undefined) throw new Error(`no secret ${name}`);
      return value;
    },
    scanTable: () => scanAll(dynamodb, stack.aws.tableName),
    queueDepth: () => queueDepth(sqs, stack.aws.queueUrl),
    dispose: async () => {
      dynamodb.destroy();
      sqs.destroy();
      await stack.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Every item of a table (at most 100 pages). */
export async function scanAll(
  dynamodb: DynamoDBClient,
  tableName: string,
): Promise<Array<Record<string, unknown>>> {
  const documents = DynamoDBDocumentClient.from(dynamodb);
  const items: Array<Record<string, unknown>> = [];
  let start: ScanCommandOutput['LastEvaluatedKey'];
  for (let page = 0; page < 100; page += 1) {
    const out = await documents.send(
      new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: start }),
    );
    for (const item of out.Items ?? []) items.push(item);
    start = out.LastEvaluatedKey;
    if (start === undefined) return items;
  }
  throw new Error(`table ${tableName} has more than 100 pages`);
}

/** Visible, in-flight and delayed messages of a queue. */
export async function queueDepth(sqs: SQSClient, queueUrl: string): Promise<number> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  const attributes = out.Attributes ?? {};
  return (
    Number(attributes.ApproximateNumberOfMessages ?? 0) +
    Number(attributes.ApproximateNumberOfMessagesNotVisible ?? 0) +
    Number(attributes.ApproximateNumberOfMessagesDelayed ?? 0)
  );
}

// ------------------------------------------------------------------------------------------------ leaks

/** A value that must never appear, and what it is (for the failure message; never the value itself). */
export interface Needle {
  readonly what: string;
  readonly value: string;
}

/** Text to search, and where it came from. */
export interface Haystack {
  readonly where: string;
  readonly text: string;
}

/** Every (needle, haystack) pair where the needle occurs; described without the value. */
export function findLeaks(needles: readonly Needle[], haystacks: readonly Haystack[]): string[] {
  const found: string[] = [];
  for (const needle of needles) {
    for (const haystack of haystacks) {
      if (haystack.text.includes(needle.value)) found.push(`${needle.what} in ${haystack.where}`);
    }
  }
  return found;
}

/** The own property names and symbols of a prototype, sorted, to compare before and after. */
export function prototypeShape(proto: object): string[] {
  return [
    ...Object.getOwnPropertyNames(proto),
    ...Object.getOwnPropertySymbols(proto).map((s) => s.toString()),
  ].sort();
}
