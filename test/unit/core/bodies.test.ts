/**
 * Bodies beyond JSON: forms, XML and text are verified over their raw bytes, decoded, mapped at ingest and
 * again by the worker from the stored payload; hostile XML and multipart are refused with nothing queued;
 * handshakes are answered with nothing recorded.
 */
import { createHmac } from 'node:crypto';
import { parseConfig } from '../../../functions/config/load';
import {
  acceptWebhook,
  answerHandshake,
  publicUrl,
  type WebhookRequest,
  webhookMethods,
} from '../../../functions/core/accept-delivery';
import { bodyType, decodeBody, parseBodyText, storedBodyFormat } from '../../../functions/core/body';
import { DeliveryRefusedError } from '../../../functions/core/errors';
import { processJob } from '../../../functions/core/process-job';
import { memoryBench, WEBHOOK_SECRET } from './support';

const bodyConfig = parseConfig(`service:
  baseUrl: http://127.0.0.1:9
  apiKeySecret: unit/api-key
integrations:
  - id: form
    verify: { scheme: hmac-sha256, secret: unit/webhook, header: x-signature }
    documents:
      - name: invoice
        template: { id: "9001" }
        data: { Customer Name: "payload.user.name", Invoice Number: "Number & '/' & $contentType" }
  - id: xml
    verify: { scheme: hmac-sha256, secret: unit/webhook, header: x-signature }
    documents:
      - name: invoice
        template: { id: "9001" }
        data: { Customer Name: "order.customer.\`@name\`", Invoice Number: "order.line[1].sku" }
  - id: text
    verify: { scheme: hmac-sha256, secret: unit/webhook, header: x-signature }
    documents:
      - name: invoice
        template: { id: "9001" }
        data: { Customer Name: "$substringBefore($body, ':')", Invoice Number: "$substringAfter($, ':')" }
  - id: slack
    verify: { scheme: slack, secret: unit/webhook }
    documents:
      - name: invoice
        template: { id: "9001" }
        data: { Customer Name: "event.user", Invoice Number: "event_id" }
`);

function bench() {
  const b = memoryBench();
  return {
    ...b,
    ingest: { ...b.ingest, config: bodyConfig },
    worker: { ...b.worker, config: bodyConfig },
  };
}

const post = (integrationId: string, contentType: string, text: string): WebhookRequest => {
  const rawBody = Buffer.from(text);
  return {
    integrationId,
    headers: {
      'content-type': contentType,
      'x-signature': createHmac('sha256', WEBHOOK_SECRET).update(rawBody).digest('hex'),
    },
    rawBody,
    query: {},
    method: 'POST',
    url: `https://hooks.example.test/v1/hooks/${integrationId}`,
  };
};

async function mappedData(b: ReturnType<typeof bench>, request: WebhookRequest) {
  const accepted = await acceptWebhook(b.ingest, request);
  expect(accepted.status).toBe(202);
  const jobId = accepted.body.jobs[0]?.jobId as string;
  expect((await processJob(b.worker, jobId, { messageId: 'm', receiveCount: 1 })).kind).toBe('stored');
  return b.service.created.at(-1)?.data;
}

const reasonOf = async (promise: Promise<unknown>): Promise<string> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DeliveryRefusedError);
  return (error as DeliveryRefusedError).reason;
};

describe('body decoding', () => {
  it('turns a form into fields, repeated ones into arrays, and parses a JSON payload field in place', () => {
    const text = `payload=${encodeURIComponent('{"type":"block_actions","user":{"name":"Ada"}}')}&tag=a&tag=b&__proto__=x`;
    const body = parseBodyText(text, 'form') as Record<string, unknown>;
    expect(body.payload).toEqual({ type: 'block_actions', user: { name: 'Ada' } });
    expect(body.tag).toEqual(['a', 'b']);
    expect(Object.hasOwn(body, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
  });

  it('gives XML the documented shape: root key, child keys, arrays, @attributes, #text, strings', () => {
    const xml =
      '<?xml version="1.0"?><order id="7"><customer name="Ada">VIP</customer><line><sku>01</sku></line><line><sku>02</sku></line><total>12.50</total></order>';
    expect(decodeBody(Buffer.from(xml), bodyType('application/xml; charset=utf-8')).body).toEqual({
      order: {
        '@id': '7',
        customer: { '@name': 'Ada', '#text': 'VIP' },
        line: [{ sku: '01' }, { sku: '02' }],
        total: '12.50',
      },
    });
  });

  it("hands back the text's bytes without encoding it again: the raw body, less a byte order mark", () => {
    const json = bodyType('application/json');
    const raw = Buffer.from('{"name":"Zoë"}');
    const plain = decodeBody(raw, json);
    expect(plain.bodyBytes).toBe(raw);
    const withBom = decodeBody(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), raw]), json);
    expect(withBom.bodyText).toBe('{"name":"Zoë"}');
    expect(Buffer.from(withBom.bodyBytes).equals(raw)).toBe(true);
    expect(withBom.body).toEqual({ name: 'Zoë' });
  });

  it('refuses a DOCTYPE, entity declarations and malformed XML', () => {
    const bomb =
      '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><lolz>&lol2;</lolz>';
    const xxe = '<!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><foo>&xxe;</foo>';
    for (const text of [bomb, xxe, '<a><b></a>', '<a/><b/>']) {
      expect(() => parseBodyText(text, 'xml')).toThrow(DeliveryRefusedError);
    }
  });

  it('takes XML nested as deep as a JSON payload may (200), and refuses one level more by naming the limit', () => {
    const nested = (depth: number): string => `${'<a>'.repeat(depth)}x${'</a>'.repeat(depth)}`;
    expect(() => parseBodyText(nested(200), 'xml')).not.toThrow();
    for (const depth of [201, 100_000]) {
      expect(() => parseBodyText(nested(depth), 'xml')).toThrow(
        new DeliveryRefusedError('malformed-body', 'The XML nests deeper than 200 elements.'),
      );
    }
  });

  it('refuses, as a malformed body, what the XML validator lets through and the parser throws on', () => {
    expect(() => parseBodyText('<a><constructor>1</constructor></a>', 'xml')).toThrow(
      /^The XML uses "constructor" as an element name/,
    );
    for (const text of ['<a><__proto__>1</__proto__></a>', '<c/><!', '<c/>&amp;<!']) {
      const error = (() => {
        try {
          parseBodyText(text, 'xml');
        } catch (thrown) {
          return thrown;
        }
      })();
      expect(error).toBeInstanceOf(DeliveryRefusedError);
      expect((error as DeliveryRefusedError).reason).toBe('malformed-body');
      // The answer names the problem, never a piece of the body.
      expect((error as DeliveryRefusedError).message).not.toContain('<!');
    }
  });

  it('refuses forms and text only with DeliveryRefusedError, whatever their fields', () => {
    // A deep `payload` parses (V8's JSON.parse does not recurse); the mapping's depth check refuses it later.
    const deep = `payload=${encodeURIComponent(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)}`;
    expect(() => parseBodyText(deep, 'form')).not.toThrow();
    expect(() => parseBodyText('payload={nope&a=%E0%A4%A&=&&==', 'form')).toThrow(DeliveryRefusedError);
    expect(parseBodyText('a=%E0%A4%A&__proto__=1&constructor=2', 'form')).toMatchObject({
      a: '\uFFFD%A',
      constructor: '2',
    });
    expect(parseBodyText('<a><__proto__/></a>', 'text')).toBe('<a><__proto__/></a>');
  });

  it('names each media type it takes, refuses multipart with 415, and reads old payloads as JSON', () => {
    expect(bodyType('application/cloudevents+json').format).toBe('json');
    expect(bodyType('text/xml').format).toBe('xml');
    expect(bodyType('TEXT/PLAIN; charset=utf-8')).toEqual({ format: 'text', mediaType: 'text/plain' });
    expect(() => bodyType('multipart/form-data; boundary=x')).toThrow(/multipart/);
    expect(() => bodyType(undefined)).toThrow(DeliveryRefusedError);
    expect(storedBodyFormat(undefined)).toBe('json');
    expect(storedBodyFormat('application/x-www-form-urlencoded')).toBe('form');
  });
});

describe('deliveries beyond JSON, through ingest and worker', () => {
  it('maps a form delivery, its payload field and $contentType', async () => {
    const b = bench();
    const form = `Number=42&payload=${encodeURIComponent('{"user":{"name":"Ada"}}')}`;
    expect(await mappedData(b, post('form', 'application/x-www-form-urlencoded', form))).toEqual({
      'Customer Name': 'Ada',
      'Invoice Number': '42/application/x-www-form-urlencoded',
    });
  });

  it('maps an XML delivery', async () => {
    const b = bench();
    const xml = '<order><customer name="Grace"/><line><sku>A</sku></line><line><sku>B</sku></line></order>';
    expect(await mappedData(b, post('xml', 'text/xml', xml))).toEqual({
      'Customer Name': 'Grace',
      'Invoice Number': 'B',
    });
  });

  it('maps a text delivery through $body and the root', async () => {
    const b = bench();
    expect(await mappedData(b, post('text', 'text/plain', 'Hopper:99'))).toEqual({
      'Customer Name': 'Hopper',
      'Invoice Number': '99',
    });
  });

  it('refuses hostile XML and multipart after verifying, with nothing recorded or queued', async () => {
    const b = bench();
    const bomb = '<!DOCTYPE a [<!ENTITY x "xx">]><order>&x;</order>';
    expect(await reasonOf(acceptWebhook(b.ingest, post('xml', 'application/xml', bomb)))).toBe(
      'malformed-body',
    );
    expect(
      await reasonOf(acceptWebhook(b.ingest, post('form', 'multipart/form-data; boundary=z', 'x'))),
    ).toBe('unsupported-media-type');
    expect(b.jobs.writes).toEqual([]);
    expect(b.queue.messages).toEqual([]);
  });

  it('refuses XML nested past the limit as a malformed body (400), not a failure (500)', async () => {
    const b = bench();
    const deep = `<order>${'<a>'.repeat(300)}${'</a>'.repeat(300)}</order>`;
    expect(await reasonOf(acceptWebhook(b.ingest, post('xml', 'application/xml', deep)))).toBe(
      'malformed-body',
    );
    expect(b.jobs.writes).toEqual([]);
    expect(b.queue.messages).toEqual([]);
  });
});

describe('handshakes at ingest', () => {
  it("answers Slack's url_verification with nothing recorded, and leaves deliveries to acceptWebhook", async () => {
    const b = bench();
    const text = '{"type":"url_verification","challenge":"c-123"}';
    const t = String(Math.floor(b.clock.ms / 1000));
    const signature = createHmac('sha256', WEBHOOK_SECRET).update(`v0:${t}:${text}`).digest('hex');
    const request: WebhookRequest = {
      ...post('slack', 'application/json', text),
      headers: {
        'content-type': 'application/json',
        'x-slack-request-timestamp': t,
        'x-slack-signature': `v0=${signature}`,
      },
    };
    expect(await answerHandshake(b.ingest, request)).toMatchObject({
      status: 200,
      body: '{"challenge":"c-123"}',
    });
    expect(b.jobs.writes).toEqual([]);
    expect(b.queue.messages).toEqual([]);
    expect(await answerHandshake(b.ingest, post('form', 'text/plain', 'x'))).toBeUndefined();
  });

  it('takes POST only, unless the scheme has a GET challenge', () => {
    expect(webhookMethods({ config: bodyConfig }, 'form')).toEqual(['POST']);
    expect(webhookMethods({ config: bodyConfig }, 'unknown')).toEqual(['POST']);
  });

  it('signs against publicUrl when set, keeping the query string the sender used', () => {
    const rebuilt = 'https://abc.execute-api.eu-west-1.amazonaws.com/v1/hooks/form?a=1&b=2';
    expect(publicUrl(undefined, rebuilt)).toBe(rebuilt);
    expect(publicUrl('https://hooks.example.com/twilio', rebuilt)).toBe(
      'https://hooks.example.com/twilio?a=1&b=2',
    );
    expect(publicUrl('https://hooks.example.com/twilio?x=1', rebuilt)).toBe(
      'https://hooks.example.com/twilio?x=1',
    );
  });
});
