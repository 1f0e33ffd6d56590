/** The jobs API Lambda: `GET /v1/jobs/{jobId}` (IAM-authorized on AWS), with presigned links to the files. */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { Observability } from '../../commons/observability';
import { toJobView } from '../../core/job-view';
import { readApiRequest } from '../../http/api-event';
import { errorResponse, jsonResponse, problemResponse } from '../../http/problem';
import type { Runtime } from '../../wiring/runtime';

/** Lifetime of the presigned file links in a job view. */
const PRESIGN_SECONDS = 3600;

/** Builds the jobs API handler from a runtime. */
export function makeJobsApiHandler(runtime: Runtime, observability: Observability) {
  const { logger, tracer } = observability;
  const presign = (bucket: string, key: string): Promise<string> =>
    getSignedUrl(runtime.s3, new GetObjectCommand({ Bucket: bucket, Key: key }), {
      expiresIn: PRESIGN_SECONDS,
    });

  const handle = async (event: APIGatewayProxyEventV2): Promise<APIGatewayProxyStructuredResultV2> => {
    const request = readApiRequest(event);
    if (request.method !== 'GET') {
      return problemResponse(405, 'method-not-allowed', 'Method not allowed', 'Jobs are read with GET.', {
        allow: 'GET',
      });
    }
    const jobId = request.pathParameters.jobId ?? '';
    if (!/^[A-Za-z0-9-]{1,64}$/.test(jobId)) {
      return problemResponse(404, 'unknown-job', 'Unknown job', 'No job has this id.');
    }
    try {
      const job = await runtime.jobs.getJob(jobId);
      if (job === undefined) return problemResponse(404, 'unknown-job', 'Unknown job', 'No job has this id.');
      return jsonResponse(200, await toJobView(job, presign));
    } catch (error) {
      logger.error('job read failed', { jobId, error: error instanceof Error ? error.name : 'unknown' });
      return errorResponse(error);
    }
  };
  return middy(handle)
    .use(captureLambdaHandler(tracer, { captureResponse: false }))
    .use(injectLambdaContext(logger, { resetKeys: true }));
}
