/**
 * The events the local stack hands to the handlers, captured from real traffic on loopback: requests to the
 * local API and messages received from the queue emulator by the poller pass Powertools' parser schemas for
 * API Gateway HTTP API (payload 2.0) and SQS events, so the handlers see locally what they see on AWS.
 */

import { APIGatewayProxyEventV2Schema, SqsSchema } from '@aws-lambda-powertools/parser/schemas';
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { APIGatewayProxyEventV2, SQSEvent } from 'aws-lambda';
import { readApiRequest } from '../../functions/http/api-event';
import { startApiServer } from '../../local/stack/api-server';
import { LOCAL_CREDENTIALS, LOCAL_REGION, startSqsEmulator } from '../../local/stack/aws-emulators';
import { startPoller } from '../../local/stack/poller';
import { waitUntil } from './helpers/wait';

jest.setTimeout(30_000);

it('turns HTTP requests into API Gateway v2 events that pass the schema and keep the bytes sent', async () => {
  const events: APIGatewayProxyEventV2[] = [];
  const capture = async (event: APIGatewayProxyEventV2) => {
    events.push(event);
    return { statusCode: 204 };
  };
  const api = await startApiServer(
    { ingest: capture, jobs: capture, putEvent: async () => ({}) },
    { port: 0 },
  );
  const binary = Buffer.from([0xff, 0x00, 0xfe, 0x7b]);
  try {
    await fetch(`${api.url}/v1/hooks/github-releases?x=1&x=2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: 'a=1; b=2', 'x-github-delivery': 'd-1' },
      body: '{"hello":"wörld"}',
    });
    await fetch(`${api.url}/v1/hooks/github-releases`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: binary,
    });
    await fetch(`${api.url}/v1/jobs/job-1`);
  } finally {
    await api.close();
  }

  expect(events).toHaveLength(3);
  const parsed = events.map((event) => APIGatewayProxyEventV2Schema.parse(event));
  expect(parsed.map((event) => event.routeKey)).toEqual([
    'POST /v1/hooks/{integrationId}',
    'POST /v1/hooks/{integrationId}',
    'GET /v1/jobs/{jobId}',
  ]);
  expect(parsed[0]).toMatchObject({
    rawQueryString: 'x=1&x=2',
    queryStringParameters: { x: '1,2' },
    cookies: ['a=1', 'b=2'],
    pathParameters: { integrationId: 'github-releases' },
    headers: { 'x-github-delivery': 'd-1' },
    requestContext: { http: { method: 'POST', sourceIp: '127.0.0.1' } },
  });
  expect(readApiRequest(events[0] as APIGatewayProxyEventV2).rawBody.toString('utf8')).toBe(
    '{"hello":"wörld"}',
  );
  expect(parsed[1]?.isBase64Encoded).toBe(true);
  expect(readApiRequest(events[1] as APIGatewayProxyEventV2).rawBody.equals(binary)).toBe(true);
  expect(parsed[2]?.pathParameters).toEqual({ jobId: 'job-1' });
});

it('turns received queue messages into SQS events that pass the schema, with receive counts', async () => {
  const fauxqs = await startSqsEmulator();
  const sqs = new SQSClient({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoint: fauxqs.endpoint,
  });
  const events: SQSEvent[] = [];
  try {
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({ QueueName: 'events-shape', Attributes: { VisibilityTimeout: '1' } }),
    );
    await sqs.send(
      new SendMessageCommand({
        QueueUrl,
        MessageBody: '{"v":1,"jobId":"job-1"}',
        MessageAttributes: { jobId: { DataType: 'String', StringValue: 'job-1' } },
      }),
    );
    const arn = 'arn:aws:sqs:us-east-1:000000000000:events-shape';
    // The first delivery is reported as failed, so the message comes back with a higher receive count.
    const poller = startPoller({
      sqs,
      queueUrl: QueueUrl as string,
      queueArn: arn,
      region: LOCAL_REGION,
      concurrency: 1,
      handlerForLane: () => async (event) => {
        events.push(event);
        return {
          batchItemFailures:
            events.length === 1 ? event.Records.map((record) => ({ itemIdentifier: record.messageId })) : [],
        };
      },
    });
    try {
      await waitUntil('two deliveries of the message', async () => (events.length >= 2 ? true : undefined));
    } finally {
      await poller.stop();
    }
  } finally {
    sqs.destroy();
    await fauxqs.stop();
  }

  const parsed = events.map((event) => SqsSchema.parse(event));
  expect(
    parsed.map((event) => event.Records.map((record) => record.attributes.ApproximateReceiveCount)),
  ).toEqual([['1'], ['2']]);
  expect(parsed[1]?.Records[0]).toMatchObject({
    body: '{"v":1,"jobId":"job-1"}',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:events-shape',
    awsRegion: LOCAL_REGION,
    messageAttributes: { jobId: { dataType: 'String', stringValue: 'job-1' } },
  });
  expect(parsed[0]?.Records[0]?.messageId).toBe(parsed[1]?.Records[0]?.messageId);
});
