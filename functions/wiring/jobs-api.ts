/** The jobs API's dependencies: the job table, and the bucket to presign links to stored files. */
import type { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoJobRepository } from '../adapters/dynamodb/job-table';
import { S3DocumentStore } from '../adapters/s3/document-store';
import type { JobsApiDeps } from '../handlers/jobs-api/make-handler';

/** Builds the jobs API's dependencies. */
export function buildJobsApiDeps(parts: {
  readonly dynamodb: DynamoDBDocumentClient;
  readonly s3: S3Client;
  readonly tableName: string;
  readonly bucket: string;
}): JobsApiDeps {
  return {
    jobs: new DynamoJobRepository(parts.dynamodb, parts.tableName),
    store: new S3DocumentStore(parts.s3, parts.bucket),
  };
}
