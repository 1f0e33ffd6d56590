/**
 * The jobs API Lambda, IAM-authorized on AWS: `GET /v1/jobs/{jobId}` with presigned file links,
 * `GET /v1/jobs` newest first a page at a time, and `GET /v1/deliveries/{deliveryId}` with its jobs.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { readIsoTime } from '../../commons/iso-time';
import { type Observability, traced } from '../../commons/observability';
import type { JobRecord, JobStatus } from '../../core/job';
import { type JobView, toJobView } from '../../core/job-view';
import { readApiRequest } from '../../http/api-event';
import { jsonResponse, ProblemError } from '../../http/problem';
import { problemErrors } from '../../http/problem-middleware';
import type { DocumentStore } from '../../ports/document-store';
import {
  InvalidCursorError,
  JOB_LIST_LIMITS,
  type JobListQuery,
  type JobRepository,
} from '../../ports/job-repository';

/** What the jobs API needs. */
export interface JobsApiDeps {
  readonly jobs: Pick<JobRepository, 'getJob' | 'listJobs' | 'findDeliveries'>;
  readonly store: Pick<DocumentStore, 'presign'>;
}

/** Every job status (a record over the union, so a new status cannot be forgotten here). */
const STATUS_NAMES: Readonly<Record<JobStatus, true>> = {
  queued: true,
  processing: true,
  created: true,
  stored: true,
  failed: true,
};
const jobStatuses = Object.keys(STATUS_NAMES) as JobStatus[];

/** Lifetime of the presigned file links in a job view. */
const PRESIGN_SECONDS = 3600;

/** Job and delivery ids as docrelay makes and accepts them; anything else is unknown, never looked up. */
const JOB_ID = /^[A-Za-z0-9-]{1,64}$/;
const MAX_DELIVERY_ID_LENGTH = 256;

const unknownJob = (): ProblemError =>
  new ProblemError(404, 'unknown-job', 'Unknown job', 'No job has this id.');
const unknownDelivery = (): ProblemError =>
  new ProblemError(404, 'unknown-delivery', 'Unknown delivery', 'No delivery has this id.');
const badQuery = (detail: string): ProblemError =>
  new ProblemError(400, 'invalid-query', 'Invalid query', detail);
const ambiguousDelivery = (integrations: readonly string[]): ProblemError =>
  new ProblemError(
    409,
    'ambiguous-delivery',
    'Ambiguous delivery',
    `Several integrations received a delivery with this id (${integrations.join(', ')}): name one with ?integration=.`,
    {},
    { integrations },
  );

/** A delivery as `GET /v1/deliveries/{deliveryId}` answers it. */
export interface DeliveryView {
  deliveryId: string;
  integration: string;
  receivedAt: string;
  jobs: JobView[];
}

/** Reads the query of `GET /v1/deliveries/{deliveryId}`: the integration it names, if any. */
export function parseDeliveryQuery(query: Readonly<Record<string, string>>): string | undefined {
  const unknown = Object.keys(query).filter((name) => name !== 'integration');
  if (unknown.length > 0) throw badQuery(`Unknown parameter ${unknown[0]}; known: integration.`);
  const integration = query.integration;
  if (integration !== undefined && integration.trim() === '') throw badQuery('integration is empty.');
  return integration?.trim();
}

/** Reads the list query of `GET /v1/jobs`; a 400 problem names the parameter that is wrong. */
export function parseJobListQuery(query: Readonly<Record<string, string>>): JobListQuery {
  const known = new Set(['integration', 'status', 'since', 'delivery', 'limit', 'cursor']);
  const unknown = Object.keys(query).filter((name) => !known.has(name));
  if (unknown.length > 0) throw badQuery(`Unknown parameter ${unknown[0]}; known: ${[...known].join(', ')}.`);
  const nonEmpty = (name: string): string | undefined => {
    const value = query[name];
    if (value === undefined) return undefined;
    if (value.trim() === '') throw badQuery(`${name} is empty.`);
    return value.trim();
  };
  const status = nonEmpty('status');
  if (status !== undefined && !Object.hasOwn(STATUS_NAMES, status)) {
    throw badQuery(`status must be one of ${jobStatuses.join(', ')}.`);
  }
  const sinceText = nonEmpty('since');
  let since: string | undefined;
  if (sinceText !== undefined) {
    const reading = readIsoTime(sinceText);
    if (!reading.ok && reading.reason === 'no-such-date')
      throw badQuery(
        `since must be a date that exists (${sinceText.trim().slice(0, 7)} has ${reading.daysInMonth} days).`,
      );
    if (!reading.ok) throw badQuery('since must be an ISO 8601 date or time, e.g. 2025-06-01T12:00:00Z.');
    since = new Date(reading.ms).toISOString();
  }
  const limitText = nonEmpty('limit');
  let limit: number | undefined;
  if (limitText !== undefined) {
    limit = /^\d{1,3}$/.test(limitText) ? Number(limitText) : Number.NaN;
    if (!(limit >= 1 && limit <= JOB_LIST_LIMITS.max)) {
      throw badQuery(`limit must be a whole number from 1 to ${JOB_LIST_LIMITS.max}.`);
    }
  }
  const integration = nonEmpty('integration');
  const deliveryId = nonEmpty('delivery');
  if (deliveryId !== undefined && deliveryId.length > MAX_DELIVERY_ID_LENGTH) {
    throw badQuery(`delivery is longer than ${MAX_DELIVERY_ID_LENGTH} characters.`);
  }
  const cursor = nonEmpty('cursor');
  return {
    ...(integration === undefined ? {} : { integration }),
    ...(status === undefined ? {} : { status: status as JobStatus }),
    ...(since === undefined ? {} : { since }),
    ...(deliveryId === undefined ? {} : { deliveryId }),
    ...(limit === undefined ? {} : { limit }),
    ...(cursor === undefined ? {} : { cursor }),
  };
}

/** Builds the jobs API handler. */
export function makeJobsApiHandler(deps: JobsApiDeps, observability: Observability) {
  const { logger } = observability;
  const view = (job: JobRecord): Promise<JobView> =>
    toJobView(job, (bucket, key) => deps.store.presign(bucket, key, PRESIGN_SECONDS));

  const getJob = async (jobId: string): Promise<APIGatewayProxyStructuredResultV2> => {
    if (!JOB_ID.test(jobId)) throw unknownJob();
    const job = await deps.jobs.getJob(jobId);
    if (job === undefined) throw unknownJob();
    return jsonResponse(200, await view(job));
  };

  const listJobs = async (query: Record<string, string>): Promise<APIGatewayProxyStructuredResultV2> => {
    let page: Awaited<ReturnType<JobsApiDeps['jobs']['listJobs']>>;
    try {
      page = await deps.jobs.listJobs(parseJobListQuery(query));
    } catch (error) {
      if (error instanceof InvalidCursorError) throw badQuery('cursor is not one this list handed out.');
      throw error;
    }
    return jsonResponse(200, {
      jobs: await Promise.all(page.jobs.map(view)),
      ...(page.cursor === undefined ? {} : { cursor: page.cursor }),
    });
  };

  const getDelivery = async (
    deliveryId: string,
    query: Record<string, string>,
  ): Promise<APIGatewayProxyStructuredResultV2> => {
    const integration = parseDeliveryQuery(query);
    if (deliveryId === '' || deliveryId.length > MAX_DELIVERY_ID_LENGTH) throw unknownDelivery();
    const found = (await deps.jobs.findDeliveries(deliveryId)).filter(
      (delivery) => integration === undefined || delivery.integration === integration,
    );
    const [delivery] = found;
    if (delivery === undefined) throw unknownDelivery();
    // One id may reach several integrations (the same bytes sent to two give the same body-hash id): one
    // answer for both would name one integration with the jobs of all, so the caller must choose.
    if (found.length > 1) throw ambiguousDelivery(found.map((each) => each.integration));
    const jobs = (await Promise.all(delivery.jobs.map(({ jobId }) => deps.jobs.getJob(jobId)))).flatMap(
      (job) => (job === undefined ? [] : [job]),
    );
    const body: DeliveryView = {
      deliveryId: delivery.deliveryId,
      integration: delivery.integration,
      receivedAt: delivery.receivedAt,
      jobs: await Promise.all(jobs.map(view)),
    };
    return jsonResponse(200, body);
  };

  const handle = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    const request = readApiRequest(event);
    if (request.method !== 'GET') {
      throw new ProblemError(405, 'method-not-allowed', 'Method not allowed', 'Jobs are read with GET.', {
        allow: 'GET',
      });
    }
    const { jobId, deliveryId } = request.pathParameters;
    if (jobId !== undefined) return getJob(jobId);
    if (deliveryId !== undefined) return getDelivery(deliveryId, request.query);
    return listJobs(request.query);
  };
  return middy(handle)
    .use(traced(observability))
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(
      problemErrors(observability, {
        refused: 'job request refused',
        failed: 'job read failed',
        fields: (event) => {
          const parameters = (event as APIGatewayProxyEventV2 | undefined)?.pathParameters;
          return {
            ...(parameters?.jobId === undefined ? {} : { jobId: parameters.jobId }),
            ...(parameters?.deliveryId === undefined ? {} : { deliveryId: parameters.deliveryId }),
          };
        },
      }),
    );
}
