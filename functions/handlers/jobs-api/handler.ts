/** Lambda entry point of the jobs-api function: the job table and the bucket, built once per container. */
import { createDynamoDbClient, createS3Client } from '../../adapters/aws-clients';
import { readLambdaSettings } from '../../commons/env';
import { createObservability, observed } from '../../commons/observability';
import { buildJobsApiDeps } from '../../wiring/jobs-api';
import { makeJobsApiHandler } from './make-handler';

const settings = readLambdaSettings();

export const handler = makeJobsApiHandler(
  buildJobsApiDeps({
    dynamodb: createDynamoDbClient(),
    s3: createS3Client(),
    tableName: settings.tableName,
    bucket: settings.bucket,
  }),
  createObservability('jobs-api', observed(settings)),
);
