/**
 * What processing a job needs (WorkerDeps), and the same with its defaults resolved once per deps object
 * (Worker), so the link lifetime estimate lives as long as the worker's handler.
 */
import type { LoadedConfig } from '../config/compile';
import type { DocumentService, TemplateSource } from '../ports/document-service';
import type { DocumentStore } from '../ports/document-store';
import type { EventPublisher } from '../ports/event-publisher';
import type { JobRepository } from '../ports/job-repository';
import type { SecretSource } from '../ports/secret-source';
import type { ServiceEstimates } from '../ports/service-estimates';
import type { Log } from './lease';
import { LinkLifetime } from './link-lifetime';
import type { FailureReason } from './retry-policy';

/** What processing a job needs. */
export interface WorkerDeps {
  readonly config: LoadedConfig;
  readonly jobs: JobRepository;
  readonly docgen: DocumentService;
  readonly templates: TemplateSource;
  readonly store: DocumentStore;
  readonly events: EventPublisher;
  readonly secrets: SecretSource;
  readonly sealingSecretName: string;
  readonly log: Log;
  /** How long a claim holds the job; at least the queue's visibility timeout. */
  readonly leaseMs: number;
  /**
   * How long the service's download links live, when known for sure (the local emulator's); it overrides
   * `service.linkLifetimeSeconds` and what the worker learns. @default learned (link-lifetime.ts)
   */
  readonly linkLifetimeMs?: number;
  /** Where what the worker learns of the service is shared between invocations. @default in memory */
  readonly estimates?: ServiceEstimates;
  /** The service's key among the estimates. @default the origin of `service.baseUrl` */
  readonly serviceKey?: string;
  /** Receives of a message before the queue moves it to the dead-letter queue. */
  readonly maxReceiveCount: number;
  /** Base of the exponential backoff between attempts, in seconds. @default 5 */
  readonly retryBaseSeconds?: number;
  /**
   * How long after receipt a job waits out a service outage (429, 5xx, timeouts, network) past the queue's
   * receive count, as a new message instead of failing; 0 counts outages as any retryable error.
   * @default 24 hours
   */
  readonly outageBudgetMs?: number;
  readonly now?: () => number;
  readonly random?: () => number;
  /** Waits before a retried download. @default a timer */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** The worker's dependencies with every default resolved. */
export interface Worker
  extends Omit<WorkerDeps, 'now' | 'random' | 'sleep' | 'retryBaseSeconds' | 'outageBudgetMs'> {
  readonly now: () => number;
  readonly random: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly retryBaseSeconds: number;
  readonly outageBudgetMs: number;
  /** `jobs.maxAttempts`. */
  readonly maxAttempts: number;
  /** The service's link lifetime: planned, and learned from downloads. */
  readonly links: LinkLifetime;
}

const DEFAULT_RETRY_BASE_SECONDS = 5;
const DEFAULT_OUTAGE_BUDGET_MS = 24 * 3_600_000;
const DEFAULT_MAX_ATTEMPTS = 10;

const timer = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const resolved = new WeakMap<WorkerDeps, Worker>();

/** The deps with their defaults, the same object for the same deps. */
export function resolveWorker(deps: WorkerDeps): Worker {
  const known = resolved.get(deps);
  if (known !== undefined) return known;
  const now = deps.now ?? Date.now;
  const service = deps.config.config.service;
  const configuredSeconds = service.linkLifetimeSeconds;
  const configuredMs =
    deps.linkLifetimeMs ?? (configuredSeconds === undefined ? undefined : configuredSeconds * 1000);
  const worker: Worker = {
    ...deps,
    now,
    random: deps.random ?? Math.random,
    sleep: deps.sleep ?? timer,
    retryBaseSeconds: deps.retryBaseSeconds ?? DEFAULT_RETRY_BASE_SECONDS,
    outageBudgetMs: deps.outageBudgetMs ?? DEFAULT_OUTAGE_BUDGET_MS,
    maxAttempts: deps.config.config.jobs?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    links: new LinkLifetime({
      ...(deps.estimates === undefined ? {} : { estimates: deps.estimates }),
      service: deps.serviceKey ?? serviceOrigin(service.baseUrl),
      ...(configuredMs === undefined ? {} : { configuredMs }),
      now,
    }),
  };
  resolved.set(deps, worker);
  return worker;
}

/** The origin of a service URL (the estimates' key), or the URL itself when it does not parse. */
export function serviceOrigin(baseUrl: string): string {
  try {
    return new URL(baseUrl).origin;
  } catch {
    return baseUrl;
  }
}

/**
 * How long a service call of a retried attempt may retry in place; a first attempt has the client's budget.
 * A retry that meets trouble gives its lane back and waits in the queue, leaving lanes to fresh deliveries.
 */
export const RETRY_ATTEMPT_SERVICE_BUDGET_MS = 2_000;

/** The in-place retry budget of a job's service calls in this attempt (undefined: the client's own). */
export const serviceBudget = (job: { readonly attempts: number }): { retryBudgetMs?: number } =>
  job.attempts > 1 ? { retryBudgetMs: RETRY_ATTEMPT_SERVICE_BUDGET_MS } : {};

/** A job error as log fields: Powertools' Logger reserves `message` and would drop it. */
export const logFields = (error: FailureReason) => ({ code: error.code, reason: error.message });
