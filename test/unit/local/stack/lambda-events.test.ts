/**
 * The events the local stack builds for the handlers have the real shape: the local API's API Gateway HTTP API
 * (payload 2.0) events and the poller's SQS events pass Powertools' parser schemas, which follow what AWS
 * sends, and carry the request as the handlers will read it.
 */

import {
  APIGatewayProxyEventV2Schema,
  SqsRecordSchema,
  SqsSchema,
} from '@aws-lambda-powertools/parser/schemas';
import type { Message } from '@aws-sdk/client-sqs';
import { decodeJobMessage } from '../../../../functions/adapters/sqs/job-message';
import { readApiRequest } from '../../../../functions/http/api-event';
import { toApiGatewayEvent } from '../../../../local/stack/api-gateway-event';
import { toSqsRecord } from '../../../../local/stack/poller';

const hookRoute = {
  routeKey: 'POST /v1/hooks/{integrationId}',
  pathParameters: { integrationId: 'github-releases' },
};

describe('toApiGatewayEvent', () => {
  it('builds a payload 2.0 event that passes the APIGatewayProxyEventV2 schema, text body as text', () => {
    const body = Buffer.from('{"action":"published","name":"Zoë"}');
    const event = toApiGatewayEvent(
      {
        method: 'POST',
        url: '/v1/hooks/github-releases?a=1&b=2&a=3',
        headers: {
          host: '127.0.0.1:3000',
          'content-type': 'application/json',
          'user-agent': 'GitHub-Hookshot/abc',
          'x-hub-signature-256': 'sha256=00',
          cookie: 'session=abc; theme=dark',
        },
        remoteAddress: '127.0.0.1',
      },
      body,
      hookRoute,
    );

    const parsed = APIGatewayProxyEventV2Schema.parse(event);

    expect(parsed).toMatchObject({
      version: '2.0',
      routeKey: 'POST /v1/hooks/{integrationId}',
      rawPath: '/v1/hooks/github-releases',
      rawQueryString: 'a=1&b=2&a=3',
      queryStringParameters: { a: '1,3', b: '2' },
      pathParameters: { integrationId: 'github-releases' },
      isBase64Encoded: false,
      body: body.toString('utf8'),
      cookies: ['session=abc', 'theme=dark'],
      requestContext: {
        http: {
          method: 'POST',
          path: '/v1/hooks/github-releases',
          sourceIp: '127.0.0.1',
          userAgent: 'GitHub-Hookshot/abc',
        },
        routeKey: 'POST /v1/hooks/{integrationId}',
        stage: '$default',
      },
    });
    // The HTTP API never passes the Cookie header itself, only `cookies`.
    expect(parsed.headers.cookie).toBeUndefined();
    expect(parsed.headers['x-hub-signature-256']).toBe('sha256=00');
    // API Gateway's request time is in the common log format, e.g. 12/Mar/2020:19:03:58 +0000.
    expect(parsed.requestContext.time).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
    expect(Math.abs(parsed.requestContext.timeEpoch - Date.now())).toBeLessThan(60_000);
    // The handler reads back exactly the bytes that were sent.
    expect(readApiRequest(event).rawBody.equals(body)).toBe(true);
  });

  it('base64-encodes a body that is not text, and the handler reads the same bytes back', () => {
    const body = Buffer.from([0xff, 0xfe, 0x00, 0x7b, 0x80]);
    const event = toApiGatewayEvent(
      { method: 'POST', url: '/v1/hooks/x', headers: { 'content-type': 'application/json' } },
      body,
      hookRoute,
    );

    const parsed = APIGatewayProxyEventV2Schema.parse(event);

    expect(parsed.isBase64Encoded).toBe(true);
    expect(parsed.body).toBe(body.toString('base64'));
    expect(readApiRequest(event).rawBody.equals(body)).toBe(true);
  });

  it('builds a GET event without a body or query that passes the schema', () => {
    const event = toApiGatewayEvent(
      { method: 'GET', url: '/v1/jobs/abc', headers: { host: 'localhost' }, remoteAddress: '::1' },
      Buffer.alloc(0),
      { routeKey: 'GET /v1/jobs/{jobId}', pathParameters: { jobId: 'abc' } },
    );

    const parsed = APIGatewayProxyEventV2Schema.parse(event);

    expect(parsed.body).toBeUndefined();
    expect(parsed.isBase64Encoded).toBe(false);
    expect(parsed.queryStringParameters).toBeUndefined();
    expect(parsed.requestContext.http.sourceIp).toBe('::1');
  });
});

describe('toSqsRecord', () => {
  const message: Message = {
    MessageId: '059f36b4-87a3-44ab-83d2-661975830a7d',
    ReceiptHandle: 'AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a',
    MD5OfBody: 'e4e68fb7bd0e697a0ae8f1bb342846b3',
    Body: JSON.stringify({ v: 1, jobId: 'job-1' }),
    Attributes: {
      ApproximateReceiveCount: '3',
      SentTimestamp: '1545082649183',
      SenderId: 'AIDAIENQZJOLO23YVJ4VO',
      ApproximateFirstReceiveTimestamp: '1545082649185',
    },
    MessageAttributes: { jobId: { DataType: 'String', StringValue: 'job-1' } },
  };
  const arn = 'arn:aws:sqs:us-east-1:000000000000:docrelay-jobs';

  it('builds a record that passes the SQS record schema, with the receive count the worker reads', () => {
    const record = toSqsRecord(message, arn, 'us-east-1');

    const parsed = SqsRecordSchema.parse(record);

    expect(parsed).toMatchObject({
      messageId: message.MessageId,
      receiptHandle: message.ReceiptHandle,
      body: message.Body,
      md5OfBody: message.MD5OfBody,
      eventSource: 'aws:sqs',
      eventSourceARN: arn,
      awsRegion: 'us-east-1',
      attributes: { ApproximateReceiveCount: '3', SentTimestamp: '1545082649183' },
      messageAttributes: { jobId: { dataType: 'String', stringValue: 'job-1' } },
    });
    expect(decodeJobMessage(parsed.body)).toBe('job-1');
  });

  it('fills what a queue emulator leaves out, so a batch event passes the SQS event schema', () => {
    const bare: Message = { MessageId: 'm-2', ReceiptHandle: 'r-2', Body: 'not json', MD5OfBody: 'x' };

    const event = SqsSchema.parse({
      Records: [toSqsRecord(message, arn, 'us-east-1'), toSqsRecord(bare, arn, 'us-east-1')],
    });

    expect(event.Records).toHaveLength(2);
    expect(event.Records[1]?.attributes.ApproximateReceiveCount).toBe('1');
    expect(event.Records[1]?.messageAttributes).toEqual({});
  });
});
