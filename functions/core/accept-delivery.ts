/**
 * Accepting a delivery, the ingest's domain: verify the raw bytes, parse, pick the rules, record the delivery
 * with its jobs (one call to the store), send one message per job (one to the queue), answer. Webhooks and
 * EventBridge events share all after verification; refusals are DeliveryRefusedError or SignatureError.
 */
import { randomUUID } from 'node:crypto';
import type { CompiledIntegration, LoadedConfig } from '../config/compile';
import { MappingError } from '../mapping/errors';
import type { MappingInput } from '../mapping/evaluate';
import { evaluateRules } from '../mapping/mapper';
import type { JobQueue } from '../ports/job-queue';
import type { JobRepository } from '../ports/job-repository';
import type { SecretSource } from '../ports/secret-source';
import {
  type HandshakeAnswer,
  type HandshakeContext,
  redactHeaders,
  senderScheme,
  type VerifyInput,
  verifyDelivery,
} from '../senders';
import type { CertificateSource } from '../senders/sns-certificates';
import { bodyType, decodeBody } from './body';
import { contentKey, type DeliveryOrigin, resolveDeliveryId } from './delivery-id';
import { DeliveryRefusedError } from './errors';
import { type DeliveryRecord, newJobRecords, type PlannedJob } from './job';
import { completeOutbox, completeWithinGrace, withinGrace } from './outbox';
import { type DeliveryPayload, MAX_SEALED_PAYLOAD_BYTES, sealPayload } from './payload';

/** What accepting a delivery needs. */
export interface IngestDeps {
  readonly config: LoadedConfig;
  readonly secrets: SecretSource;
  readonly jobs: JobRepository;
  readonly queue: JobQueue;
  /** Name of the secret that seals payloads and links at rest. */
  readonly sealingSecretName: string;
  readonly now?: () => Date;
  readonly newId?: () => string;
  /** What sender handshakes may do (confirm an SNS subscription, keep Asana's secret). */
  readonly handshake?: HandshakeDeps;
  /** SNS signing certificates from their SigningCertURL, for integrations that pin none in a secret. */
  readonly certificates?: CertificateSource;
}

const noCertificates: CertificateSource = {
  get: () => Promise.reject(new Error('this ingest cannot fetch signing certificates')),
};

/** A webhook as it arrived. */
export interface WebhookRequest {
  readonly integrationId: string;
  /** Header names lower-cased; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  readonly rawBody: Buffer;
  readonly query: Readonly<Record<string, string>>;
  /** Upper-case HTTP method. */
  readonly method: string;
  /** The URL as rebuilt from the request (functions/http/api-event.ts); `publicUrl` overrides it. */
  readonly url: string;
}

/** The answer to an accepted delivery (product-spec.md). */
export interface AcceptedDelivery {
  /** 202 for a new delivery with jobs, 200 for no matching rule or a duplicate. */
  readonly status: 200 | 202;
  readonly body: {
    deliveryId: string;
    jobs: Array<{ jobId: string; rule: string }>;
    duplicate?: true;
  };
}

/** The largest body accepted when the config sets no `ingest.maxBodyBytes`. */
export const DEFAULT_MAX_BODY_BYTES = 1_048_576;

// No hint of which integrations exist: the URL is public.
const unknownIntegration = (): DeliveryRefusedError =>
  new DeliveryRefusedError('unknown-integration', 'No integration is configured at this URL.');

/**
 * What a handshake may do beyond answering (see HandshakeContext). Without it, SNS subscriptions are not
 * confirmed and Asana's X-Hook-Secret is echoed but not kept (the configured secret must then hold it).
 */
export interface HandshakeDeps {
  /** GETs an SNS SubscribeURL (the sns scheme checks it is https on an SNS host first). */
  readonly fetch?: HandshakeContext['fetch'];
  /** Stores a secret value under a secret NAME (Secrets Manager PutSecretValue on AWS). */
  readonly keepSecret?: (name: string, value: string) => Promise<void>;
}

/** The HTTP methods an integration's webhook URL takes: POST, and GET for schemes with a GET challenge. */
export function webhookMethods(deps: Pick<IngestDeps, 'config'>, integrationId: string): readonly string[] {
  const scheme = deps.config.integrations.get(integrationId)?.config.verify?.scheme;
  return (scheme === undefined ? undefined : senderScheme(scheme)?.methods) ?? ['POST'];
}

/**
 * Answers the sender's challenge or handshake when the request is one (nothing is recorded or queued),
 * else undefined: the request is a delivery for `acceptWebhook`. Throws as acceptWebhook does.
 */
export async function answerHandshake(
  deps: IngestDeps,
  request: WebhookRequest,
): Promise<HandshakeAnswer | undefined> {
  const { integration, verifyInput, secretNames } = await prepareVerification(deps, request);
  const scheme = senderScheme(verifyInput.config.scheme);
  if (scheme?.handshake === undefined) return undefined;
  const context = handshakeContext(deps, integration.id, secretNames);
  return scheme.handshake({ ...verifyInput, query: request.query }, context);
}

/** Verifies, parses and accepts one webhook. Throws DeliveryRefusedError, SignatureError, or a 5xx cause. */
export async function acceptWebhook(deps: IngestDeps, request: WebhookRequest): Promise<AcceptedDelivery> {
  const { integration, verifyInput } = await prepareVerification(deps, request);
  const verify = verifyInput.config;
  const now = verifyInput.now;
  // A GET is only ever a handshake (Meta's challenge): there is nothing to deliver.
  if (request.method !== 'POST') {
    throw new DeliveryRefusedError('malformed-body', 'Deliveries are sent with POST.');
  }
  const type = bodyType(senderScheme(verify.scheme)?.bodyMediaType ?? request.headers['content-type']);
  // Verify the bytes exactly as received, before anything parses them.
  const verified = verifyDelivery(verifyInput);
  const { bodyText, bodyBytes, body } = decodeBody(request.rawBody, type);
  const input: MappingInput = {
    body,
    contentType: type.mediaType,
    headers: request.headers,
    query: request.query,
    receivedAt: now.toISOString(),
  };
  const deliveryId = await resolveDeliveryId(integration, input, request.rawBody, 'webhook').catch(
    rethrowMapping,
  );
  const content = contentKey(integration, request.rawBody, verified);
  return acceptDelivery(deps, integration, {
    deliveryId,
    ...(content === undefined ? {} : { contentKey: content }),
    input,
    payload: {
      bodyText,
      bodyBytes,
      headers: redactHeaders(request.headers, verify),
      query: { ...request.query },
      // Plain JSON is what a payload without a content type means, so those stay as they always were; any
      // other type is kept (`application/cloudevents+json` too), so the worker's `$contentType` is the ingest's.
      ...(type.mediaType === 'application/json' ? {} : { contentType: type.mediaType }),
    },
  });
}

/** The integration, its secrets and the verify input of one request; refuses unknown and oversized ones. */
async function prepareVerification(
  deps: IngestDeps,
  request: WebhookRequest,
): Promise<{ integration: CompiledIntegration; verifyInput: VerifyInput; secretNames: readonly string[] }> {
  const integration = deps.config.integrations.get(request.integrationId);
  // An events-only integration (no `verify`) has no webhook URL.
  const verify = integration?.config.verify;
  if (integration === undefined || verify === undefined) throw unknownIntegration();
  // The size limit applies before anything reads the body.
  const limit = deps.config.config.ingest?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (request.rawBody.length > limit) {
    throw new DeliveryRefusedError(
      'payload-too-large',
      `The body is ${request.rawBody.length} bytes; the limit is ${limit}.`,
    );
  }
  const secretNames =
    verify.secret === undefined ? [] : Array.isArray(verify.secret) ? verify.secret : [verify.secret];
  const base: VerifyInput = {
    rawBody: request.rawBody,
    headers: request.headers,
    config: verify,
    secrets: await Promise.all(secretNames.map((name) => deps.secrets.get(name))),
    now: deps.now?.() ?? new Date(),
    url: publicUrl(integration.config.publicUrl, request.url),
    method: request.method,
  };
  // No secret pins the key (SNS): the scheme fetches it from where the delivery names, checked.
  const fetchKeys = secretNames.length === 0 ? senderScheme(verify.scheme)?.fetchKeys : undefined;
  const verifyInput =
    fetchKeys === undefined
      ? base
      : { ...base, secrets: await fetchKeys(base, deps.certificates ?? noCertificates) };
  return { integration, verifyInput, secretNames };
}

/**
 * The URL a sender signed: the integration's `publicUrl` (with the request's query string when it has
 * none of its own), else the URL rebuilt from the request.
 */
export function publicUrl(configured: string | undefined, requestUrl: string): string {
  if (configured === undefined) return requestUrl;
  if (configured.includes('?')) return configured;
  const query = requestUrl.indexOf('?');
  return query < 0 ? configured : `${configured}${requestUrl.slice(query)}`;
}

function handshakeContext(
  deps: IngestDeps,
  integrationId: string,
  secretNames: readonly string[],
): HandshakeContext {
  const { fetch, keepSecret } = deps.handshake ?? {};
  const secretName = secretNames[0];
  return {
    fetch:
      fetch ??
      (() =>
        Promise.reject(new Error(`integration ${integrationId}: this ingest cannot confirm subscriptions`))),
    keepSecret: async (value) => {
      if (keepSecret === undefined || secretName === undefined) return;
      await keepSecret(secretName, value);
      deps.secrets.refresh(secretName);
    },
    secret: (name) => deps.secrets.get(name),
    rereadSecrets: () =>
      Promise.all(
        secretNames.map((name) => {
          deps.secrets.refresh(name);
          return deps.secrets.get(name);
        }),
      ),
  };
}

/** An EventBridge event for an integration with `eventBridge`: its id is the delivery id, no signature. */
export async function acceptEvent(
  deps: IngestDeps,
  integrationId: string,
  event: Record<string, unknown>,
): Promise<AcceptedDelivery> {
  const integration = deps.config.integrations.get(integrationId);
  if (integration === undefined || integration.config.eventBridge === undefined) throw unknownIntegration();
  const now = deps.now?.() ?? new Date();
  const bodyText = JSON.stringify(event);
  const input: MappingInput = { body: event, headers: {}, query: {}, receivedAt: now.toISOString() };
  const origin: DeliveryOrigin = 'event';
  const deliveryId = await resolveDeliveryId(integration, input, Buffer.from(bodyText), origin).catch(
    rethrowMapping,
  );
  return acceptDelivery(deps, integration, {
    deliveryId,
    input,
    payload: { bodyText, headers: {}, query: {} },
  });
}

function rethrowMapping(error: unknown): never {
  if (error instanceof MappingError) throw new DeliveryRefusedError('unprocessable-payload', error.message);
  throw error;
}

interface Delivery {
  readonly deliveryId: string;
  /** Set when the delivery id is not covered by the signature: the signed content dedupes too. */
  readonly contentKey?: string;
  readonly input: MappingInput;
  readonly payload: DeliveryPayload;
}

/** Records a delivery and queues its jobs; a delivery seen before is answered as a duplicate. */
async function acceptDelivery(
  deps: IngestDeps,
  integration: CompiledIntegration,
  delivery: Delivery,
): Promise<AcceptedDelivery> {
  const rules = await evaluateRules(integration, delivery.input).catch(rethrowMapping);
  const { deliveryId } = delivery;
  const now = deps.now?.() ?? new Date();
  if (rules.length === 0) {
    // A delivery seen before under this id is a duplicate whatever this copy matches (its body differs, or
    // the config changed since): its jobs are the answer. One that matched no rule is not recorded (nothing
    // to make or keep; a write for every event a sender sends unasked), so its copies answer the same again.
    const seen = await deps.jobs.getDelivery(integration.id, deliveryId);
    if (seen !== undefined) return answerDuplicate(deps, integration.id, deliveryId, now, seen);
    return { status: 200, body: { deliveryId, jobs: [] } };
  }

  const receivedAt = now.toISOString();
  const newId = deps.newId ?? randomUUID;
  const sealingSecret = await deps.secrets.get(deps.sealingSecretName);
  const sealedPayload = sealPayload(delivery.payload, sealingSecret, integration.id, deliveryId);
  if (sealedPayload.length > MAX_SEALED_PAYLOAD_BYTES) {
    throw new DeliveryRefusedError(
      'payload-too-large',
      'The body is too large to keep for retries once compressed; send a smaller payload.',
    );
  }
  const planned: PlannedJob[] = rules.map((rule) => ({
    jobId: newId(),
    rule: rule.name,
    templateId: rule.config.template.id,
    ...(rule.config.template.fileId === undefined ? {} : { templateFileId: rule.config.template.fileId }),
  }));
  // The same signed content under another id is a replay (or a sender's redelivery with a new id): with a
  // content key, it is a duplicate of the delivery that holds the content. A failure once the delivery is written
  // throws (5xx) with jobs perhaps unwritten: the sender's retry is a duplicate and writes them (answerDuplicate).
  const record = { integration: integration.id, deliveryId, receivedAt, jobs: planned, sealedPayload };
  const result = await deps.jobs
    .createDelivery(record, newJobRecords(record, now.getTime()), delivery.contentKey)
    .catch(async (error: unknown) => {
      // Should nobody retry, the note reopens a delivery written without all its jobs for the reconciler
      // (best effort; it changes nothing when no delivery was written).
      await deps.jobs.markDeliverySendFailed(integration.id, deliveryId, receivedAt).catch(() => undefined);
      throw error;
    });
  if (result.created) {
    // The last call before the answer. Should it never happen (a crash), each job's first-pickup lease has
    // the reconciler send it (docs/architecture.md, "Queue").
    try {
      await deps.queue.send(planned.map(({ jobId }) => jobId));
    } catch (error) {
      // The sender is answered 5xx and retries: tell its retry to send (the note also reopens the delivery
      // for the reconciler, should nobody retry).
      await deps.jobs.markDeliverySendFailed(integration.id, deliveryId, receivedAt).catch(() => undefined);
      throw error;
    }
    return { status: 202, body: { deliveryId, jobs: planned.map(({ jobId, rule }) => ({ jobId, rule })) } };
  }
  return answerDuplicate(deps, integration.id, result.duplicateOf, now, result.existing);
}

/** Answers a duplicate of `deliveryId` with its jobs, finishing its outbox if its first attempt could not. */
async function answerDuplicate(
  deps: IngestDeps,
  integration: string,
  deliveryId: string,
  now: Date,
  known?: DeliveryRecord,
): Promise<AcceptedDelivery> {
  // A content key whose delivery is not recorded: its first attempt failed before recording it, and its
  // sender's retry (under its own id) records it. Nothing is made for this copy.
  const existing = known ?? (await deps.jobs.getDelivery(integration, deliveryId));
  // The first attempt may not have written all its jobs (a failure or crash between the delivery's put and
  // theirs, answered no 2xx) or sent them: write and send what is missing, so "duplicate" never stands for
  // "not all queued". Within the grace, jobs all written are resent only after a noted failed send.
  if (existing !== undefined && existing.enqueuedAt === undefined) {
    if (!withinGrace(existing, now.getTime())) await completeOutbox(deps, existing, now.getTime());
    else await completeWithinGrace(deps, existing, now.getTime());
  }
  return {
    status: 200,
    body: {
      deliveryId,
      jobs: (existing?.jobs ?? []).map(({ jobId, rule }) => ({ jobId, rule })),
      duplicate: true,
    },
  };
}
