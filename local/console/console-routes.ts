/**
 * The web console's server side: its static pages (plain HTML, CSS and one script under static/) and its
 * actions under `/_console/*`, which reuse the core as the CLI does (replay, redrive, map). Reads go through
 * the jobs API; the API server in front refuses foreign hosts, origins and content types.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DocrelayError } from '../../functions/commons/errors';
import type { LoadedConfig } from '../../functions/config/compile';
import { findRule } from '../../functions/config/compile';
import { DeliveryRefusedError, JobConflictError } from '../../functions/core/errors';
import type { JobRecord } from '../../functions/core/job';
import { openPayload, payloadMappingInput } from '../../functions/core/payload';
import { ReplayRefusedError, resetJobForReplay } from '../../functions/core/replay';
import { type HttpResponse, jsonResponse, problemResponse } from '../../functions/http/problem';
import { MappingError } from '../../functions/mapping/errors';
import { mapDelivery, mapRule, type TemplateSource } from '../../functions/mapping/mapper';
import type { JobQueue } from '../../functions/ports/job-queue';
import type { JobRepository } from '../../functions/ports/job-repository';
import type { LocalRequest, LocalRoutes } from '../stack/api-server';

/** Where the console's actions reach the stack. */
export interface ConsoleDeps {
  readonly jobs: Pick<JobRepository, 'getJob' | 'getDelivery' | 'updateJob'>;
  readonly queue: Pick<JobQueue, 'send'>;
  /** Takes a job's messages out of the dead-letter queue (after a redrive); resolves to how many. */
  readonly deadLetters: { remove(jobId: string): Promise<number> };
  /** The configuration (integrations and rules for the playground and the mapped data). */
  readonly config: LoadedConfig;
  /** The service's templates, as the worker reads them. */
  readonly templates: TemplateSource;
  /** The key sealed payloads open with; absent when this console cannot read it (mapped data unavailable). */
  readonly sealingSecret?: () => Promise<string>;
  /** What the console is looking at, for its header: `local` or the deployed stack's name. */
  readonly stackLabel: string;
}

/** The console's static files: path → file under static/ and its content type. */
const STATIC: Readonly<Record<string, { file: string; type: string }>> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/console/console.js': { file: 'console.js', type: 'text/javascript; charset=utf-8' },
  '/console/console.css': { file: 'console.css', type: 'text/css; charset=utf-8' },
};

/** Pages may load only their own files and call only their own origin; nothing may frame them. */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const JOB_ID = /^[A-Za-z0-9-]{1,64}$/;

const notFound = (detail: string): HttpResponse => problemResponse(404, 'not-found', 'Not found', detail);
const badRequest = (detail: string): HttpResponse =>
  problemResponse(400, 'invalid-request', 'Invalid request', detail);
const conflict = (detail: string): HttpResponse => problemResponse(409, 'conflict', 'Conflict', detail);

/** Builds the console's routes. */
export function consoleRoutes(deps: ConsoleDeps): LocalRoutes {
  const staticDir = join(__dirname, 'static');
  return async (request: LocalRequest): Promise<HttpResponse | undefined> => {
    const page = Object.hasOwn(STATIC, request.path) ? STATIC[request.path] : undefined;
    if (page !== undefined) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
      const text = await readFile(join(staticDir, page.file), 'utf8');
      return { statusCode: 200, headers: { 'content-type': page.type, ...PAGE_HEADERS }, body: text };
    }
    if (!request.path.startsWith('/_console/')) return undefined;
    const path = request.path.slice('/_console'.length);
    if (request.method === 'GET' && path === '/info') return jsonResponse(200, info(deps));
    const mapped = /^\/jobs\/([^/]+)\/mapped$/.exec(path);
    if (request.method === 'GET' && mapped !== null) return mappedData(deps, mapped[1] as string);
    const action = /^\/jobs\/([^/]+)\/(replay|redrive)$/.exec(path);
    if (request.method === 'POST' && action !== null) {
      const body = readJson(request.body);
      if (body === undefined) return badRequest('The body is not a JSON object.');
      return action[2] === 'replay'
        ? replay(deps, action[1] as string, body.fresh === true)
        : redrive(deps, action[1] as string);
    }
    if (request.method === 'POST' && path === '/map') {
      const body = readJson(request.body);
      if (body === undefined) return badRequest('The body is not a JSON object.');
      return playground(deps, body);
    }
    return notFound('No such console route.');
  };
}

function readJson(body: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(body.length === 0 ? '{}' : body.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The stack's name and its integrations with their rules (the filter and the playground's choices). */
function info(deps: ConsoleDeps) {
  return {
    stack: deps.stackLabel,
    mappedData: deps.sealingSecret !== undefined,
    integrations: [...deps.config.integrations.values()].map((integration) => ({
      id: integration.id,
      rules: integration.rules.map((rule) => ({ name: rule.name, templateId: rule.config.template.id })),
    })),
  };
}

/** What a mapping failure tells the operator: every problem, located (the console is the config's owner). */
function mappingProblem(error: unknown): HttpResponse | undefined {
  if (error instanceof DocrelayError && error.code.startsWith('DOCGEN_')) {
    // The template could not be read (unknown id, service unreachable): the client's messages hold no secret.
    return problemResponse(502, 'template-unavailable', 'Template unavailable', error.message);
  }
  if (!(error instanceof MappingError)) return undefined;
  return {
    statusCode: 422,
    headers: { 'content-type': 'application/problem+json' },
    body: JSON.stringify({
      type: 'urn:docrelay:problem:mapping-failed',
      title: 'Mapping failed',
      status: 422,
      detail: error.message,
      problems: error.problems,
    }),
  };
}

/** The data the job's rule maps its delivery's payload to now: the sealed payload opened and mapped again. */
async function mappedData(deps: ConsoleDeps, jobId: string): Promise<HttpResponse> {
  if (!JOB_ID.test(jobId)) return notFound('No job has this id.');
  const job = await deps.jobs.getJob(jobId);
  if (job === undefined) return notFound('No job has this id.');
  if (deps.sealingSecret === undefined) {
    return conflict('This console cannot open sealed payloads (no sealing secret is configured for it).');
  }
  const delivery = await deps.jobs.getDelivery(job.integration, job.deliveryId);
  if (delivery === undefined) return conflict('The delivery of this job is no longer recorded.');
  const rule = findRule(deps.config, job.integration, job.rule);
  if (rule === undefined) {
    return conflict(
      `The configuration has no rule "${job.rule}" in integration "${job.integration}" any more.`,
    );
  }
  let payload: ReturnType<typeof openPayload>;
  try {
    payload = openPayload(
      delivery.sealedPayload,
      await deps.sealingSecret(),
      job.integration,
      job.deliveryId,
    );
  } catch {
    return conflict('The payload cannot be opened (was the sealing secret replaced?).');
  }
  try {
    const template = await deps.templates.getTemplate(rule.config.template.id);
    // Parsed and bound as the worker maps it: a form, XML or text body is not JSON.
    const document = await mapRule(rule, payloadMappingInput(payload, job.receivedAt), template);
    return jsonResponse(200, document);
  } catch (error) {
    if (error instanceof DeliveryRefusedError) {
      return conflict(`The kept payload no longer parses: ${error.message}`);
    }
    const answer = mappingProblem(error);
    if (answer !== undefined) return answer;
    throw error;
  }
}

/** Reads the job, or answers 404. */
async function jobOr404(deps: ConsoleDeps, jobId: string): Promise<JobRecord | HttpResponse> {
  const job = JOB_ID.test(jobId) ? await deps.jobs.getJob(jobId) : undefined;
  return job ?? notFound('No job has this id.');
}

const isJob = (value: JobRecord | HttpResponse): value is JobRecord => 'jobId' in value;

/** As `docrelay replay <jobId> [--fresh]`: the job is reset, its message sent, its dead letters removed. */
async function replay(deps: ConsoleDeps, jobId: string, fresh: boolean): Promise<HttpResponse> {
  const job = await jobOr404(deps, jobId);
  if (!isJob(job)) return job;
  let reset: JobRecord;
  try {
    reset = await resetJobForReplay(deps.jobs, job, { fresh });
  } catch (error) {
    if (error instanceof ReplayRefusedError) return conflict(error.message);
    if (error instanceof JobConflictError) return conflict(`job ${jobId} changed meanwhile; try again`);
    throw error;
  }
  // As `docrelay replay`: the job no longer needs a person (should this run fail, it is parked again).
  const removed = await removeDeadLetters(deps, jobId);
  // After the reset: should this send fail, the renewed lease lets the reconciler send the job later.
  await deps.queue.send([jobId]);
  return jsonResponse(200, { jobId, from: job.status, status: reset.status, ...removed });
}

/**
 * Takes the job's messages out of the dead-letter queue before its message is sent: a run that fails at once
 * could park a new message this would take for an old one. Best effort: `removedFromDeadLetterQueue` is
 * absent when the queue could not be read, and `dlq redrive` removes what is left.
 */
async function removeDeadLetters(
  deps: ConsoleDeps,
  jobId: string,
): Promise<{ removedFromDeadLetterQueue?: number }> {
  try {
    return { removedFromDeadLetterQueue: await deps.deadLetters.remove(jobId) };
  } catch {
    return {};
  }
}

/**
 * As `docrelay dlq redrive` does for each message, for one job: a failed job is reset and sent, an open one
 * only sent, a stored one left; its messages leave the dead-letter queue (before the send, see
 * removeDeadLetters).
 */
async function redrive(deps: ConsoleDeps, jobId: string): Promise<HttpResponse> {
  const job = await jobOr404(deps, jobId);
  if (!isJob(job)) return job;
  let status = job.status;
  if (job.status === 'failed') {
    try {
      status = (await resetJobForReplay(deps.jobs, job)).status;
    } catch (error) {
      if (error instanceof JobConflictError) return conflict(`job ${jobId} changed meanwhile; try again`);
      throw error;
    }
  }
  const removed = await removeDeadLetters(deps, jobId);
  if (job.status !== 'stored') await deps.queue.send([jobId]);
  return jsonResponse(200, { jobId, from: job.status, status, ...removed });
}

/** As `docrelay map`: what each matching rule of the integration would send for the payload. */
async function playground(deps: ConsoleDeps, body: Record<string, unknown>): Promise<HttpResponse> {
  const integrationId = typeof body.integration === 'string' ? body.integration : '';
  const integration = deps.config.integrations.get(integrationId);
  if (integration === undefined) return badRequest(`No integration "${integrationId}" is configured.`);
  if (!('payload' in body)) return badRequest('Give the payload as `payload`.');
  const strings = (value: unknown, name: (key: string) => string): Record<string, string> =>
    typeof value === 'object' && value !== null
      ? Object.fromEntries(
          Object.entries(value).flatMap(([k, v]) => (typeof v === 'string' ? [[name(k), v]] : [])),
        )
      : {};
  try {
    const documents = await mapDelivery(
      integration,
      {
        body: body.payload,
        headers: strings(body.headers, (key) => key.toLowerCase()),
        query: strings(body.query, (key) => key),
        receivedAt: new Date().toISOString(),
      },
      deps.templates,
    );
    return jsonResponse(200, { documents });
  } catch (error) {
    const answer = mappingProblem(error);
    if (answer !== undefined) return answer;
    throw error;
  }
}
