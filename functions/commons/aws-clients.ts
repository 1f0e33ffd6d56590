/**
 * One factory for every AWS SDK client docrelay uses. On AWS it is called with no endpoint; the local stack
 * passes the loopback endpoint of each embedded emulator. Nothing else differs between the two.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Where the clients connect. Omit everything on AWS; the local stack sets endpoints and static credentials. */
export interface AwsClientSettings {
  readonly region?: string;
  readonly endpoints?: { readonly s3?: string; readonly sqs?: string; readonly dynamodb?: string };
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

/** The AWS clients of one process, created once per container. */
export interface AwsClients {
  readonly s3: S3Client;
  readonly sqs: SQSClient;
  readonly dynamodb: DynamoDBDocumentClient;
  readonly eventBridge: EventBridgeClient;
  readonly secretsManager: SecretsManagerClient;
}

/** Creates the AWS clients, pointed at the given endpoints when there are any. */
export function createAwsClients(settings: AwsClientSettings = {}): AwsClients {
  const base = {
    ...(settings.region === undefined ? {} : { region: settings.region }),
    ...(settings.credentials === undefined ? {} : { credentials: settings.credentials }),
  };
  const local = settings.endpoints !== undefined;
  return {
    s3: new S3Client({
      ...base,
      ...(settings.endpoints?.s3 === undefined
        ? {}
        : { endpoint: settings.endpoints.s3, forcePathStyle: true }),
      // Local S3 emulators predate the SDK's default CRC32 trailers; S3 itself takes both.
      ...(local
        ? { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' }
        : {}),
    }),
    sqs: new SQSClient({
      ...base,
      ...(settings.endpoints?.sqs === undefined ? {} : { endpoint: settings.endpoints.sqs }),
    }),
    dynamodb: DynamoDBDocumentClient.from(
      new DynamoDBClient({
        ...base,
        ...(settings.endpoints?.dynamodb === undefined ? {} : { endpoint: settings.endpoints.dynamodb }),
      }),
      { marshallOptions: { removeUndefinedValues: true } },
    ),
    eventBridge: new EventBridgeClient(base),
    secretsManager: new SecretsManagerClient(base),
  };
}
