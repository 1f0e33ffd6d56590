/**
 * Accepting a delivery, the ingest's domain: verify the raw bytes, then parse, then pick the rules, then
 * record the delivery (the dedupe key, and the outbox holding the sealed payload) with its jobs, then
 * complete the outbox (one message per job). Nothing slow happens here: no template read, no generation.
 * Webhooks and EventBridge events share everything after verification. Refusals are DeliveryRefusedError
 * (or the sender scheme's SignatureError); no HTTP is known here.
 */
import { randomUUID } from 'node:crypto';
import type { CompiledIntegration, LoadedConfig } from '../config/compile';
import { MappingError } from '../mapping/errors';
import type { MappingInput } from '../mapping/evaluate';
import { evaluateRules } from '../mapping/mapper';
import type { JobQueue } from '../ports/job-queue';
import type { JobRepository } from '../ports/job-repository';
import type { SecretSource } from '../ports/secret-source';
import { redactHeaders, verifyDelivery } from '../senders';
import { type DeliveryOrigin, resolveDeliveryId } from './delivery-id';
import { DeliveryRefusedError } from './errors';
import { newJobRecord, type PlannedJob } from './job';
import { completeOutbox } from './outbox';
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
}

/** A webhook as it arrived. */
export interface WebhookRequest {
  readonly integrationId: string;
  /** Header names lower-cased; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  readonly rawBody: Buffer;
  readonly query: Readonly<Record<string, string>>;
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

const isJsonContentType = (value: string | undefined): boolean => {
  if (value === undefined) return false;
  const type = value.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
};

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Verifies, parses and accepts one webhook. Throws DeliveryRefusedError, SignatureError, or a 5xx cause. */
export async function acceptWebhook(deps: IngestDeps, request: WebhookRequest): Promise<AcceptedDelivery> {
  const integration = deps.config.integrations.get(request.integrationId);
  // An events-only integration (no `verify`) has no webhook URL.
  const verify = integration?.config.verify;
  if (integration === undefined || verify === undefined) throw unknownIntegration();
  const limit = deps.config.config.ingest?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (request.rawBody.length > limit) {
    throw new DeliveryRefusedError(
      'payload-too-large',
      `The body is ${request.rawBody.length} bytes; the limit is ${limit}.`,
    );
  }
  if (!isJsonContentType(request.headers['content-type'])) {
    throw new DeliveryRefusedError('unsupported-media-type', 'Send the body as application/json.');
  }
  const names =
    verify.secret === undefined ? [] : Array.isArray(verify.secret) ? verify.secret : [verify.secret];
  const secrets = await Promise.all(names.map((name) => deps.secrets.get(name)));
  const now = deps.now?.() ?? new Date();
  // Verify the bytes exactly as received, before anything parses them.
  // The public URL arrives with the intake work (issue 12 item 6); until then URL-signing schemes refuse.
  verifyDelivery({
    rawBody: request.rawBody,
    headers: request.headers,
    config: verify,
    secrets,
    now,
    url: '',
    method: 'POST',
  });

  let bodyText: string;
  try {
    bodyText = utf8.decode(request.rawBody);
  } catch {
    throw new DeliveryRefusedError('malformed-body', 'The body is not valid UTF-8.');
  }
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch (error) {
    const detail = error instanceof RangeError ? 'The JSON nests too deeply.' : 'The body is not valid JSON.';
    throw new DeliveryRefusedError('malformed-body', detail);
  }
  const input: MappingInput = {
    body,
    headers: request.headers,
    query: request.query,
    receivedAt: now.toISOString(),
  };
  const deliveryId = await resolveDeliveryId(integration, input, request.rawBody, 'webhook').catch(
    rethrowMapping,
  );
  return acceptDelivery(deps, integration, {
    deliveryId,
    input,
    payload: { bodyText, headers: redactHeaders(request.headers, verify), query: { ...request.query } },
  });
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
  if (rules.length === 0) return { status: 200, body: { deliveryId, jobs: [] } };

  const now = deps.now?.() ?? new Date();
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
  const record = { integration: integration.id, deliveryId, receivedAt, jobs: planned, sealedPayload };
  const result = await deps.jobs.createDelivery(
    record,
    planned.map((plan) => newJobRecord(integration.id, deliveryId, receivedAt, now.getTime(), plan)),
  );
  if (result.created) {
    await completeOutbox(deps, record, now.getTime(), { jobsWritten: true });
    return { status: 202, body: { deliveryId, jobs: planned.map(({ jobId, rule }) => ({ jobId, rule })) } };
  }
  const existing = result.existing;
  // The first attempt did not get its messages out (it crashed, or the queue failed and the sender was told
  // so): finish its work now, so "duplicate" never stands for "nothing queued".
  if (existing.enqueuedAt === undefined) await completeOutbox(deps, existing, now.getTime());
  return {
    status: 200,
    body: { deliveryId, jobs: existing.jobs.map(({ jobId, rule }) => ({ jobId, rule })), duplicate: true },
  };
}
