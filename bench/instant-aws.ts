/**
 * AWS SDK clients whose calls are answered at once, in process: the SDK still builds, serialises, signs and
 * parses every request (that is the handler's own work), only the network round trip is gone. Answers are
 * the smallest valid ones for the operations the ingest makes (DynamoDB PutItem/UpdateItem/GetItem, SQS
 * SendMessageBatch with the MD5s the SDK checks).
 */
import { createHash } from 'node:crypto';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { HttpRequest, HttpResponse } from '@smithy/types';

const credentials = { accessKeyId: 'AKIDBENCH', secretAccessKey: 'bench-secret' } as const;
const region = 'us-east-1';

const jsonResponse = (body: unknown, contentType: string): { response: HttpResponse } => ({
  response: {
    statusCode: 200,
    headers: { 'content-type': contentType, 'x-amzn-requestid': 'bench' },
    body: Buffer.from(JSON.stringify(body)),
  },
});

const bodyText = (request: HttpRequest): string => {
  const body: unknown = request.body;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  return '';
};

interface BatchEntry {
  readonly Id?: unknown;
  readonly MessageBody?: unknown;
}

function answerSqs(request: HttpRequest): { response: HttpResponse } {
  const target = request.headers['x-amz-target'] ?? '';
  if (target.endsWith('.SendMessageBatch')) {
    const parsed: unknown = JSON.parse(bodyText(request));
    const entries: BatchEntry[] =
      typeof parsed === 'object' && parsed !== null && 'Entries' in parsed && Array.isArray(parsed.Entries)
        ? (parsed.Entries as BatchEntry[])
        : [];
    return jsonResponse(
      {
        Successful: entries.map((entry, i) => ({
          Id: String(entry.Id),
          MessageId: `m-${i}`,
          MD5OfMessageBody: createHash('md5')
            .update(String(entry.MessageBody ?? ''))
            .digest('hex'),
        })),
        Failed: [],
      },
      'application/x-amz-json-1.0',
    );
  }
  return jsonResponse({}, 'application/x-amz-json-1.0');
}

const answerDynamo = (): { response: HttpResponse } => jsonResponse({}, 'application/x-amz-json-1.0');

/** A DynamoDB document client (as the runtime builds it) and an SQS client answered instantly. */
export function instantAwsClients(): { dynamodb: DynamoDBDocumentClient; sqs: SQSClient; destroy(): void } {
  const ddb = new DynamoDBClient({
    region,
    credentials,
    requestHandler: { handle: async () => answerDynamo() },
  });
  const dynamodb = DynamoDBDocumentClient.from(ddb, { marshallOptions: { removeUndefinedValues: true } });
  const sqs = new SQSClient({
    region,
    credentials,
    requestHandler: { handle: async (request: HttpRequest) => answerSqs(request) },
  });
  return {
    dynamodb,
    sqs,
    destroy: () => {
      ddb.destroy();
      sqs.destroy();
    },
  };
}
