/** The documents bucket: the one given, or a created one (TLS only, encrypted, versioned, access-logged). */
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { BlockPublicAccess, Bucket, BucketEncryption, type IBucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import type { DocRelayBucketOption } from '../docrelay-props';

/** Inputs of `buildDocumentsBucket`. */
export interface DocumentsBucketOptions {
  readonly option?: DocRelayBucketOption;
  readonly encryptionKey?: IKey;
  readonly removalPolicy: RemovalPolicy;
}

/** The documents bucket and, when it was created here, its access logs bucket. */
export interface DocumentsBucket {
  readonly bucket: IBucket;
  readonly accessLogsBucket?: IBucket;
  /** The bucket's SSE-KMS key: the created bucket's, or the given bucket's (its own, else the one given with it). */
  readonly encryptionKey?: IKey;
}

/** Uses the given bucket, or creates the documents bucket (and an access logs bucket unless one is given). */
export function buildDocumentsBucket(scope: Construct, options: DocumentsBucketOptions): DocumentsBucket {
  const existing = options.option?.existing;
  if (existing !== undefined) {
    // A bucket imported by name or ARN knows no key: the caller names it beside the bucket.
    const key = options.option?.encryptionKey ?? existing.encryptionKey;
    return { bucket: existing, ...(key === undefined ? {} : { encryptionKey: key }) };
  }
  const create = options.option?.create ?? {};
  const key = options.encryptionKey;
  const accessLogsBucket = create.accessLogsBucket ?? buildAccessLogsBucket(scope, options.removalPolicy);
  const bucket = new Bucket(scope, 'Documents', {
    ...create.bucketProps,
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    versioned: true,
    ...(key === undefined
      ? { encryption: BucketEncryption.S3_MANAGED }
      : { encryption: BucketEncryption.KMS, encryptionKey: key, bucketKeyEnabled: true }),
    serverAccessLogsBucket: accessLogsBucket,
    serverAccessLogsPrefix: create.accessLogsPrefix ?? 'documents/',
    lifecycleRules: create.lifecycleRules ?? [
      { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      { id: 'expire-noncurrent-versions', noncurrentVersionExpiration: Duration.days(30) },
    ],
    removalPolicy: options.removalPolicy,
  });
  return { bucket, accessLogsBucket, ...(key === undefined ? {} : { encryptionKey: key }) };
}

/** The server access logs bucket (cdk-nag's S1 recognises a bucket that receives access logs: no waiver). */
function buildAccessLogsBucket(scope: Construct, removalPolicy: RemovalPolicy): Bucket {
  return new Bucket(scope, 'AccessLogs', {
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    // S3 server access logging delivers only to SSE-S3 buckets.
    encryption: BucketEncryption.S3_MANAGED,
    lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(365) }],
    removalPolicy,
  });
}
