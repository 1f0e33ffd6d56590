/**
 * What AWS hands the functions in the aws tier: a signed webhook as API Gateway's event, the jobs queue's
 * messages as the SQS event source mapping's records, an HTTP front that turns loopback requests into
 * ingest invocations (API Gateway's part), and a poller that feeds the worker from the queue (the event
 * source mapping's part: a message is deleted when its record is not a batch item failure).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeleteMessageCommand, type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { loadConfigFileSync } from '../../functions/config/load';
import { signDelivery, signedBody } from '../../functions/senders';
import { httpEvent, INTEGRATION, type MotoDeployment, REGION } from './deployed-stack';
import type { LambdaContainer, Outcome } from './lambda-container';

/** A delivery signed as its sender signs it (standard-webhooks), as API Gateway hands it to the ingest. */
export function signedDelivery(stack: MotoDeployment, title: string) {
  const verify = loadConfigFileSync(stack.configPath).integrations.get(INTEGRATION)?.config.verify;
  if (verify === undefined) throw new Error('no verify');
  const payload = Buffer.from(
    JSON.stringify({ type: 'note.created', data: { title, body: `written by the aws tier: ${title}` } }),
  );
  const rawPath = `/v1/hooks/${INTEGRATION}`;
  const signing = {
    config: verify,
    secrets: [stack.webhookSecret],
    rawBody: payload,
    now: new Date(),
    url: `https://moto.execute-api.${REGION}.amazonaws.com${rawPath}`,
    method: 'POST',
  };
  const body = signedBody(signing);
  const headers = { 'content-type': 'application/json', ...signDelivery({ ...signing, rawBody: body }) };
  return httpEvent(
    'POST',
    'POST /v1/hooks/{integrationId}',
    rawPath,
    { integrationId: INTEGRATION },
    {
      headers,
      body: body.toString('utf8'),
    },
  );
}

/** The handler's HTTP answer, or an error naming how it failed. */
export function httpAnswer(outcome: Outcome): {
  statusCode: number;
  body: string;
  headers?: Record<string, string>;
} {
  if (!('resolved' in outcome)) throw new Error(`the handler failed: ${JSON.stringify(outcome)}`);
  return outcome.resolved as { statusCode: number; body: string };
}

/** A queue message as the event source mapping's SQS record. */
export function sqsRecord(stack: MotoDeployment, message: Message) {
  const queueArn = stack.deployed.resolve({ 'Fn::GetAtt': [queueLogicalId(stack), 'Arn'] }) as string;
  return {
    messageId: message.MessageId,
    receiptHandle: message.ReceiptHandle,
    body: message.Body,
    attributes: message.Attributes ?? {},
    messageAttributes: Object.fromEntries(
      Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
        name,
        {
          stringValue: value.StringValue,
          dataType: value.DataType,
          stringListValues: [],
          binaryListValues: [],
        },
      ]),
    ),
    md5OfBody: message.MD5OfBody,
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: REGION,
  };
}

/** The jobs queue: the one the worker's event source mapping reads. */
function queueLogicalId(stack: MotoDeployment): string {
  const mapping = Object.values(stack.template.Resources).find(
    (resource) => resource.Type === 'AWS::Lambda::EventSourceMapping',
  );
  const source = (mapping?.Properties?.EventSourceArn as { 'Fn::GetAtt'?: [string, string] } | undefined)?.[
    'Fn::GetAtt'
  ];
  if (source === undefined) throw new Error('the template has no SQS event source mapping');
  return source[0];
}

/** Receives one round of the jobs queue's messages (at most 10, waiting up to a second). */
export async function receiveJobMessages(stack: MotoDeployment): Promise<Message[]> {
  const { Messages = [] } = await stack.clients.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: stack.deployed.ref(queueLogicalId(stack)),
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 1,
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    }),
  );
  return Messages;
}

/** Feeds the worker container from the jobs queue, one record per invocation, until stopped. */
export function pollWorker(stack: MotoDeployment, worker: LambdaContainer): { stop(): Promise<number> } {
  let running = true;
  let invocations = 0;
  const loop = (async () => {
    while (running) {
      for (const message of await receiveJobMessages(stack)) {
        const outcome = await worker.invoke({ Records: [sqsRecord(stack, message)] });
        invocations += 1;
        const failures =
          'resolved' in outcome ? (outcome.resolved as { batchItemFailures?: unknown[] }) : undefined;
        if (failures?.batchItemFailures?.length === 0) {
          await stack.clients.sqs.send(
            new DeleteMessageCommand({
              QueueUrl: stack.deployed.ref(queueLogicalId(stack)),
              ReceiptHandle: message.ReceiptHandle,
            }),
          );
        }
      }
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return invocations;
    },
  };
}

/** API Gateway's part: POST /v1/hooks/{integrationId} on loopback becomes an ingest invocation. */
export async function startWebhookFront(
  ingest: LambdaContainer,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      const integrationId = /^\/v1\/hooks\/([^/]+)$/.exec(url.pathname)?.[1];
      if (request.method !== 'POST' || integrationId === undefined) {
        response.writeHead(404).end();
        return;
      }
      const headers = Object.fromEntries(
        Object.entries(request.headers).map(([name, value]) => [name, [value].flat().join(',')]),
      );
      const event = httpEvent(
        'POST',
        'POST /v1/hooks/{integrationId}',
        url.pathname,
        { integrationId },
        {
          headers,
          body: Buffer.concat(chunks).toString('utf8'),
          rawQueryString: url.search.slice(1),
        },
      );
      ingest.invoke(event).then(
        (outcome) => {
          const answer = httpAnswer(outcome);
          response.writeHead(answer.statusCode, answer.headers ?? {}).end(answer.body);
        },
        () => response.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
