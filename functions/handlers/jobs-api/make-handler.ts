/** The jobs API Lambda: `GET /v1/jobs/{jobId}` (IAM-authorized on AWS), with presigned links to the files. */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { Observability } from '../../commons/observability';
import { toJobView } from '../../core/job-view';
import { readApiRequest } from '../../http/api-event';
import { jsonResponse, ProblemError } from '../../http/problem';
import { problemErrors } from '../../http/problem-middleware';
import type { DocumentStore } from '../../ports/document-store';
import type { JobRepository } from '../../ports/job-repository';

/** What the jobs API needs. */
export interface JobsApiDeps {
  readonly jobs: Pick<JobRepository, 'getJob'>;
  readonly store: Pick<DocumentStore, 'presign'>;
}

/** Lifetime of the presigned file links in a job view. */
const PRESIGN_SECONDS = 3600;

const unknownJob = (): ProblemError =>
  new ProblemError(404, 'unknown-job', 'Unknown job', 'No job has this id.');

/** Builds the jobs API handler. */
export function makeJobsApiHandler(deps: JobsApiDeps, observability: Observability) {
  const { logger, tracer } = observability;
  const handle = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    const request = readApiRequest(event);
    if (request.method !== 'GET') {
      throw new ProblemError(405, 'method-not-allowed', 'Method not allowed', 'Jobs are read with GET.', {
        allow: 'GET',
      });
    }
    const jobId = request.pathParameters.jobId ?? '';
    if (!/^[A-Za-z0-9-]{1,64}$/.test(jobId)) throw unknownJob();
    const job = await deps.jobs.getJob(jobId);
    if (job === undefined) throw unknownJob();
    return jsonResponse(
      200,
      await toJobView(job, (bucket, key) => deps.store.presign(bucket, key, PRESIGN_SECONDS)),
    );
  };
  return middy(handle)
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(
      problemErrors(observability, {
        refused: 'job request refused',
        failed: 'job read failed',
        fields: (event) => {
          const jobId = (event as APIGatewayProxyEventV2 | undefined)?.pathParameters?.jobId;
          return jobId === undefined ? {} : { jobId };
        },
      }),
    );
}
