/**
 * Every signing preset of the registry, through the local stack over HTTP: a genuine delivery signed as its
 * sender signs it is accepted, and the captured delivery re-sent under new values of every header the sender
 * sends besides its signature (its id headers above all), re-serialised where the sender signs parsed
 * content (Twilio's parameters, Adyen's item fields), makes no new job: it is answered as a duplicate of the
 * first, or refused, and the queue holds the first delivery's messages only.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import { readLocalSettings } from '../../functions/commons/env';
import { loadConfigFile } from '../../functions/config/load';
import {
  SENDERS,
  type SenderScheme,
  senderScheme,
  signDelivery,
  signedBody,
  type VerifyConfig,
} from '../../functions/senders';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/stack/aws-emulators';
import { type LocalStack, startLocalStack } from '../../local/stack/local-stack';
import { queueDepth } from './helpers/security-harness';

jest.setTimeout(120_000);

/** SNS signs with its own certificate and `none` signs nothing: neither has a captured signature to replay. */
const UNSIGNABLE = new Set(['sns', 'none']);

/** One integration per case: every signing preset, plus the variants the issue names. */
interface ReplayCase {
  readonly id: string;
  readonly scheme: SenderScheme;
  /** The verify block's options besides scheme and secret, as YAML flow entries. */
  readonly options: Readonly<Record<string, string>>;
  /** The secret value; a development value of the scheme's form by default. */
  readonly secret?: string;
}

/** Values for the options a preset requires (Meta's verify token secret, a generic scheme's header). */
const REQUIRED: Readonly<Record<string, string>> = { header: 'X-Sig', verifyTokenSecret: 'rp/verify-token' };

const requiredOptions = (scheme: SenderScheme): Record<string, string> =>
  Object.fromEntries(
    Object.entries(scheme.options)
      .filter(([, rule]) => rule?.required !== undefined)
      .map(([name]) => [name, REQUIRED[name] ?? '']),
  );

const presetCases: ReplayCase[] = SENDERS.filter((scheme) => !UNSIGNABLE.has(scheme.name)).map((scheme) => ({
  id: `rp-${scheme.name}`,
  scheme,
  // Issue 39 items 1-2 for hmac: the id outside signedContent, the timestamp inside it.
  options:
    scheme.name === 'hmac'
      ? {
          header: 'X-Sig',
          idHeader: 'X-Delivery',
          timestampHeader: 'X-Ts',
          signedContent: '"{timestamp}.{body}"',
        }
      : requiredOptions(scheme),
}));

const hmacBodyOnly: ReplayCase = {
  id: 'rp-hmac-body-only',
  scheme: senderScheme('hmac') as SenderScheme,
  options: { header: 'X-Sig', idHeader: 'X-Delivery' },
};

const gitlabSigning: ReplayCase = {
  id: 'rp-gitlab-signing',
  scheme: senderScheme('gitlab') as SenderScheme,
  options: {},
  secret: `whsec_${randomBytes(32).toString('base64')}`,
};

const CASES: readonly ReplayCase[] = [...presetCases, hmacBodyOnly, gitlabSigning];

const publicUrl = (id: string): string => `https://hooks.example.test/v1/hooks/${id}`;

function configYaml(): string {
  const integrations = CASES.map((c) => {
    const options = Object.entries(c.options).map(([name, value]) => `, ${name}: ${value}`);
    return `  - id: ${c.id}
    publicUrl: ${publicUrl(c.id)}
    verify: { scheme: ${c.scheme.name}, secret: rp/${c.id}${options.join('')} }
    documents:
      - { name: note, template: { id: "9003" }, data: { Title: "'replay'" } }`;
  });
  return `service:
  baseUrl: https://docs.example.com
  apiKeySecret: docrelay/service-api-key
integrations:
${integrations.join('\n')}
`;
}

/** A body the scheme's sender would send: a notification for Adyen, a form for Twilio, JSON otherwise. */
function bodyFor(scheme: SenderScheme, now: Date): Buffer {
  const unique = randomUUID();
  if (scheme.name === 'twilio') {
    return Buffer.from(
      `MessageSid=SM${unique.replace(/-/g, '')}&From=%2B15550100&Body=hello+replay+world&To=%2B15550199`,
    );
  }
  if (scheme.name === 'adyen') {
    const item = {
      pspReference: `P${unique.slice(0, 8)}`,
      merchantAccountCode: 'DocrelayTest',
      merchantReference: 'order-1',
      eventCode: 'AUTHORISATION',
      success: 'true',
      eventDate: now.toISOString(),
      amount: { value: 1250, currency: 'EUR' },
    };
    return Buffer.from(
      JSON.stringify({ live: 'false', notificationItems: [{ NotificationRequestItem: item }] }),
    );
  }
  const note = {
    id: `evt_${unique}`,
    type: 'note.created',
    title: 'Replay',
    webhookTimestamp: now.getTime(),
  };
  return Buffer.from(JSON.stringify(note));
}

/** The same content as the sender signs it, serialised differently: what a replayer may send. */
function reserialised(scheme: SenderScheme, body: Buffer): Buffer | undefined {
  if (scheme.name === 'twilio') {
    // Parameters re-ordered, spaces as %20 rather than +.
    const pairs = [...new URLSearchParams(body.toString('utf8'))].reverse();
    return Buffer.from(pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'));
  }
  if (scheme.name === 'adyen') {
    // Pretty-printed, with an unsigned field changed.
    const parsed = JSON.parse(body.toString('utf8')) as {
      notificationItems: Array<Record<string, Record<string, unknown>>>;
    };
    const item = parsed.notificationItems[0]?.NotificationRequestItem;
    if (item !== undefined) item.eventDate = '2001-01-01T00:00:00Z';
    return Buffer.from(JSON.stringify(parsed, null, 2));
  }
  return undefined;
}

interface Answer {
  readonly status: number;
  readonly body: { deliveryId?: string; jobs?: unknown[]; duplicate?: boolean };
}

let stack: LocalStack;
let sqs: SQSClient;
let dataDir: string;
const secrets: Record<string, string> = {};

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'docrelay-replay-'));
  const configPath = join(dataDir, 'replay.yaml');
  await writeFile(configPath, configYaml());
  const settings = readLocalSettings(
    { PORT: '0', DOCRELAY_DATA_DIR: dataDir, DOCRELAY_CONFIG: configPath },
    resolve(__dirname, '../..'),
  );
  // Each secret in its sender's form (Adyen's hex key, a Discord key pair...), before the stack reads them.
  for (const c of CASES) {
    secrets[`rp/${c.id}`] = c.secret ?? c.scheme.devSecret?.(randomBytes(32)) ?? '';
  }
  secrets['rp/verify-token'] = randomUUID();
  await writeFile(settings.secretsFile, JSON.stringify(secrets), { mode: 0o600 });
  stack = await startLocalStack({
    settings,
    config: await loadConfigFile(configPath),
    logLevel: 'SILENT',
    startWorkers: false,
    visibilityTimeoutSeconds: 3,
    maxReceiveCount: 3,
    retryBaseSeconds: 1,
    reconcileIntervalMs: 600_000,
  });
  sqs = new SQSClient({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoint: stack.aws.endpoints.sqs,
  });
});

afterAll(async () => {
  sqs?.destroy();
  await stack?.stop();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

async function post(id: string, body: Buffer, headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(`${stack.url}/v1/hooks/${id}`, { method: 'POST', headers, body });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Answer['body']) };
}

it.each(CASES.map((c) => [c.id, c] as const))(
  '%s: a genuine delivery makes its job; replays under new id headers and re-serialised make none',
  async (_id, c) => {
    const loaded = await loadConfigFile(join(dataDir, 'replay.yaml'));
    const config = loaded.integrations.get(c.id)?.config.verify as VerifyConfig;
    const now = new Date();
    const sign = { config, secrets: [secrets[`rp/${c.id}`] ?? ''], now, url: publicUrl(c.id) };
    const rawBody = signedBody({ ...sign, rawBody: bodyFor(c.scheme, now) });
    const signed = signDelivery({ ...sign, rawBody });
    const headers: Record<string, string> = { 'content-type': 'application/json', ...signed };

    const before = await queueDepth(sqs, stack.aws.queueUrl);
    const first = await post(c.id, rawBody, headers);
    expect(first.status).toBe(202);
    expect(first.body.jobs).toHaveLength(1);

    // Every header the sender sends besides its credentials and the content type, one at a time, then all.
    const secretHeaders = new Set([...c.scheme.secretHeaders, config.header ?? '', 'content-type']);
    const replaceable = Object.keys(signed).filter((name) => !secretHeaders.has(name));
    const idHeaders = new Set(
      [
        config.idHeader,
        c.scheme.deliveryId !== undefined && 'header' in c.scheme.deliveryId
          ? c.scheme.deliveryId.header
          : undefined,
      ].filter((name): name is string => name !== undefined),
    );
    const variants: Array<[string, Record<string, string>]> = replaceable.map((name) => [
      name,
      { ...headers, [name]: `replay-${randomUUID()}` },
    ]);
    if (replaceable.length > 1) {
      variants.push([
        'all',
        { ...headers, ...Object.fromEntries(replaceable.map((n) => [n, `replay-${randomUUID()}`])) },
      ]);
    }
    variants.push(['none changed', headers]);
    for (const [changed, replayHeaders] of variants) {
      const replay = await post(c.id, rawBody, replayHeaders);
      // A changed id header is where a replay used to get through: it must be a duplicate of the first.
      if (idHeaders.has(changed) || changed === 'none changed') {
        const signedId =
          c.scheme.deliveryId !== undefined && 'header' in c.scheme.deliveryId && c.scheme.deliveryId.signed;
        if (!(signedId && changed !== 'none changed')) {
          expect({ changed, ...replay }).toMatchObject({
            changed,
            status: 200,
            body: { deliveryId: first.body.deliveryId, duplicate: true },
          });
          continue;
        }
      }
      // Anything else is a duplicate or refused (a signed header changed): never a new delivery.
      expect({ changed, status: replay.status }).toEqual({
        changed,
        status: replay.status === 200 ? 200 : 401,
      });
      if (replay.status === 200) expect(replay.body).toMatchObject({ duplicate: true });
    }
    const other = reserialised(c.scheme, rawBody);
    if (other !== undefined) {
      const idHeader = [...idHeaders][0];
      const replayHeaders =
        idHeader === undefined ? headers : { ...headers, [idHeader]: `replay-${randomUUID()}` };
      const replay = await post(c.id, other, replayHeaders);
      expect(replay).toMatchObject({
        status: 200,
        body: { deliveryId: first.body.deliveryId, duplicate: true },
      });
    }
    // One delivery's messages: nothing the replays did reached the queue (no worker runs here).
    expect((await queueDepth(sqs, stack.aws.queueUrl)) - before).toBe(1);
  },
);
