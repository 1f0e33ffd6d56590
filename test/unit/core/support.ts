/** The core's unit-test bench: a small configuration, in-memory adapters, and a fake clock. */
import { createHmac } from 'node:crypto';
import { InMemoryDocumentService } from '../../../functions/adapters/memory/document-service';
import { InMemoryDocumentStore } from '../../../functions/adapters/memory/document-store';
import { InMemoryEventPublisher } from '../../../functions/adapters/memory/event-publisher';
import { InMemoryJobQueue } from '../../../functions/adapters/memory/job-queue';
import { InMemoryJobRepository } from '../../../functions/adapters/memory/job-repository';
import { StaticSecretSource } from '../../../functions/adapters/memory/secret-source';
import { parseConfig } from '../../../functions/config/load';
import type { IngestDeps, WebhookRequest } from '../../../functions/core/accept-delivery';
import type { Log } from '../../../functions/core/lease';
import type { WorkerDeps } from '../../../functions/core/process-job';
import { invoiceTemplate, releaseTemplate } from '../mapping/fixtures/templates';

export const WEBHOOK_SECRET = 'unit-webhook-secret-0123456789';
export const SEALING_SECRET = 'unit-sealing-secret-0123456789abcdef';

/**
 * The integrations: `notes` (one job), `releases` (two rules, one of them conditional), `relayed` (its id from a
 * header), `published` (one rule, only for `action = 'published'`) and `events-only`.
 */
export const config = parseConfig(`service:
  baseUrl: http://127.0.0.1:9
  apiKeySecret: unit/api-key
  maxConcurrency: 2
jobs:
  maxAttempts: 4
integrations:
  - id: notes
    verify: { scheme: hmac-sha256, secret: unit/webhook, header: x-signature, prefix: "sha256=" }
    deliveryId: "id"
    documents:
      - name: invoice
        template: { id: "9001" }
        data: { Customer Name: "customer", Invoice Number: "number" }
  - id: releases
    verify: { scheme: hmac-sha256, secret: unit/webhook, header: x-signature, prefix: "sha256=" }
    documents:
      - name: notes
        template: { id: "9002", fileId: "90021" }
        data: { Release: "name", Repository: "repo" }
      - name: changelog
        when: "draft = false"
        template: { id: "9002", fileId: "90022" }
        data: { Release: "name", Repository: "repo" }
  - id: relayed
    verify: { scheme: hmac-sha256, secret: unit/webhook, header: x-signature, prefix: "sha256=" }
    deliveryId: "$headers.\`x-request-id\`"
    documents:
      - name: invoice
        template: { id: "9001" }
        data: { Customer Name: "customer", Invoice Number: "number" }
  - id: published
    verify: { scheme: hmac-sha256, secret: unit/webhook, header: x-signature, prefix: "sha256=" }
    deliveryId: "id"
    documents:
      - name: invoice
        when: "action = 'published'"
        template: { id: "9001" }
        data: { Customer Name: "customer", Invoice Number: "number" }
  - id: events-only
    eventBridge: { eventPattern: { source: ["unit.orders"] } }
    documents:
      - name: invoice
        template: { id: "9001" }
        data: { Customer Name: "detail.customer", Invoice Number: "detail.number" }
`);

/** A clock the test moves by hand. */
export class FakeClock {
  constructor(public ms = Date.parse('2026-01-01T00:00:00Z')) {}
  readonly now = (): number => this.ms;
  readonly date = (): Date => new Date(this.ms);
  advance(ms: number): void {
    this.ms += ms;
  }
}

/** A log that keeps its lines. */
export function memoryLog(): Log & { lines: Array<{ level: string; message: string; extra: unknown[] }> } {
  const lines: Array<{ level: string; message: string; extra: unknown[] }> = [];
  const at =
    (level: string) =>
    (message: string, ...extra: unknown[]): void => {
      lines.push({ level, message, extra });
    };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** Everything the core needs, in memory, sharing one clock. */
export function memoryBench(clock = new FakeClock()) {
  const jobs = new InMemoryJobRepository({ now: clock.now });
  const queue = new InMemoryJobQueue();
  const secrets = new StaticSecretSource({
    'unit/webhook': WEBHOOK_SECRET,
    'unit/api-key': 'unit-api-key',
    'unit/sealing': SEALING_SECRET,
  });
  const service = new InMemoryDocumentService([invoiceTemplate, releaseTemplate]);
  const store = new InMemoryDocumentStore();
  const events = new InMemoryEventPublisher();
  const log = memoryLog();
  let ids = 0;
  const ingest: IngestDeps = {
    config,
    secrets,
    jobs,
    queue,
    sealingSecretName: 'unit/sealing',
    now: clock.date,
    newId: () => {
      ids += 1;
      return `job-${ids}`;
    },
  };
  const worker: WorkerDeps = {
    config,
    jobs,
    docgen: service,
    templates: service,
    store,
    events,
    secrets,
    sealingSecretName: 'unit/sealing',
    log,
    leaseMs: 60_000,
    maxReceiveCount: 3,
    retryBaseSeconds: 5,
    now: clock.now,
    random: () => 0.5,
    // A retried download's pause passes on the fake clock, at once.
    sleep: async (ms) => clock.advance(ms),
  };
  return { clock, jobs, queue, secrets, service, store, events, log, ingest, worker };
}

/** A webhook to `integrationId`, signed as the config's hmac-sha256 scheme expects. */
export function signedWebhook(
  integrationId: string,
  body: unknown,
  headers: Record<string, string> = {},
): WebhookRequest {
  const rawBody = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  const signature = `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(rawBody).digest('hex')}`;
  return {
    integrationId,
    headers: { 'content-type': 'application/json', 'x-signature': signature, ...headers },
    rawBody,
    query: {},
    method: 'POST',
    url: `https://hooks.example.test/v1/hooks/${integrationId}`,
  };
}

/**
 * Leaves a delivery as one recorded open (given fewer jobs than it plans, as the in-steps path once did): its
 * grace running from now, its last planned job marked to close it on its first pickup.
 */
export function recordedInSteps(jobs: InMemoryJobRepository, integration: string, deliveryId: string): void {
  const stored = jobs.deliveries.get(`${integration}#${deliveryId}`);
  if (stored === undefined) throw new Error(`no delivery ${deliveryId}`);
  const last = jobs.jobs.get(stored.record.jobs.at(-1)?.jobId ?? '');
  if (last === undefined) throw new Error(`no job for delivery ${deliveryId}`);
  last.closesDelivery = true;
  stored.open = true;
}
