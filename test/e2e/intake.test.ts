/**
 * The intake end to end, over HTTP through the local stack: a form, an XML and a text delivery each end as a
 * stored document with their mapped values, which the console's "mapped data" shows again; a Twilio delivery
 * signed for the stack's own http URL is accepted, and so is one through a tunnel whose host is a publicUrl's
 * (which reaches the webhook URLs only); a sender described only in YAML (`scheme: hmac`) is verified,
 * deduplicated by its id header and refused when stale; an integration's configured answer is sent; a
 * challenge is answered with no job made. Every signature is computed here by hand, as the senders document.
 */
import { createHmac } from 'node:crypto';
import { parseConfig } from '../../functions/config/load';
import { rawText } from './helpers/raw-http';
import { type Answer, type HookBody, startTestStack, type TestStack } from './helpers/stack';

jest.setTimeout(90_000);

let t: TestStack;

const config = parseConfig(`service:
  baseUrl: http://127.0.0.1:9
  apiKeySecret: docrelay/service-api-key
integrations:
  - id: forms
    verify: { scheme: hmac, secret: intake/forms, header: x-signature, prefix: "sha256=" }
    documents:
      - name: note
        template: { id: "9003" }
        data: { Title: "payload.title", Body: "name & ' via ' & $contentType" }
  - id: orders-xml
    verify: { scheme: hmac, secret: intake/xml, header: x-signature, prefix: "sha256=" }
    respond: { status: 200, contentType: text/xml, body: "<Response/>" }
    documents:
      - name: note
        template: { id: "9003" }
        data: { Title: "order.customer.\`@name\`", Body: "$join(order.item.\`#text\`, ', ')" }
  - id: texts
    verify: { scheme: hmac, secret: intake/text, header: x-signature, prefix: "sha256=" }
    documents:
      - name: note
        template: { id: "9003" }
        data: { Title: "'A text'", Body: "$body" }
  - id: described
    verify:
      scheme: hmac
      secret: intake/described
      algorithm: sha512
      encoding: base64
      header: x-acme-signature
      prefix: "v1="
      signedContent: "{id}.{timestamp}.{body}"
      timestampHeader: x-acme-timestamp
      toleranceSeconds: 300
      idHeader: x-acme-id
    documents:
      - name: note
        template: { id: "9003" }
        data: { Title: "title" }
  - id: sms
    verify: { scheme: twilio, secret: intake/twilio }
    respond: { status: 200, contentType: text/xml, body: "<Response/>" }
    documents:
      - name: note
        template: { id: "9003" }
        data: { Title: "From", Body: "Body" }
  - id: sms-tunnel
    verify: { scheme: twilio, secret: intake/twilio }
    publicUrl: https://abc.tunnel.test/v1/hooks/sms-tunnel
    respond: { status: 200, contentType: text/xml, body: "<Response/>" }
    documents:
      - name: note
        template: { id: "9003" }
        data: { Title: "From", Body: "Body" }
  - id: slack-app
    verify: { scheme: slack, secret: intake/slack }
    documents:
      - name: note
        template: { id: "9003" }
        data: { Title: "event.text" }
`);

beforeAll(async () => {
  t = await startTestStack({ config });
});

afterAll(async () => {
  await t?.dispose();
});

const hmacSha256 = (secret: string, body: Buffer): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** Posts a body signed with `scheme: hmac`'s defaults (HMAC-SHA256, hex, `sha256=`, the raw body). */
async function post(integration: string, secretName: string, body: Buffer, contentType: string) {
  const secret = await t.secret(secretName);
  return t.post(integration, body, { 'content-type': contentType, 'x-signature': hmacSha256(secret, body) });
}

/** The console's "mapped data" of a job: its rule mapped again from the kept payload. */
async function consoleMapped(jobId: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${t.url}/_console/jobs/${encodeURIComponent(jobId)}/mapped`);
  return { status: response.status, body: await response.json() };
}

/** The stored text of the one job a delivery made. */
async function storedText(answer: Answer<HookBody>): Promise<string> {
  expect(answer.status).toBe(202);
  const [view] = await t.waitForJobs(answer.body.jobs.map((job) => job.jobId));
  expect(view?.status).toBe('stored');
  const file = view?.files[0];
  return (await t.readObject(file?.bucket as string, file?.key as string)).bytes.toString('utf8');
}

describe('bodies beyond JSON', () => {
  it('stores a form delivery, its JSON `payload` field parsed in place', async () => {
    const body = Buffer.from(
      `name=Ada&payload=${encodeURIComponent(JSON.stringify({ title: 'From a form' }))}`,
    );
    const answer = await post('forms', 'intake/forms', body, 'application/x-www-form-urlencoded');
    const text = await storedText(answer);
    expect(text).toContain('From a form');
    expect(text).toContain('Ada via application/x-www-form-urlencoded');
    // The console maps it again as the worker did: a form, with $contentType bound.
    expect(await consoleMapped(answer.body.jobs[0]?.jobId as string)).toMatchObject({
      status: 200,
      body: { data: { Title: 'From a form', Body: 'Ada via application/x-www-form-urlencoded' } },
    });
  });

  it('stores an XML delivery in the documented shape, and answers as the integration configured', async () => {
    const body = Buffer.from(
      '<?xml version="1.0"?><order id="7"><customer name="Grace"/><item sku="a">Compiler</item><item sku="b">Manual</item></order>',
    );
    const secret = await t.secret('intake/xml');
    const response = await fetch(`${t.url}/v1/hooks/orders-xml`, {
      method: 'POST',
      headers: { 'content-type': 'application/xml', 'x-signature': hmacSha256(secret, body) },
      body,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/xml/);
    expect(await response.text()).toBe('<Response/>');
    // The configured answer hides the job ids: find the job through the listing API.
    const list = await t.getJobs('?integration=orders-xml');
    const jobId = list.jobs[0]?.jobId as string;
    const [view] = await t.waitForJobs([jobId]);
    const file = view?.files[0];
    const text = (await t.readObject(file?.bucket as string, file?.key as string)).bytes.toString('utf8');
    expect(text).toContain('Grace');
    expect(text).toContain('Compiler, Manual');
    expect(await consoleMapped(jobId)).toMatchObject({
      status: 200,
      body: { data: { Title: 'Grace', Body: 'Compiler, Manual' } },
    });
  });

  it('stores a text delivery, the mapping seeing it as $body', async () => {
    const body = Buffer.from('Plain words, as a sender posts them.');
    const answer = await post('texts', 'intake/text', body, 'text/plain');
    const text = await storedText(answer);
    expect(text).toContain('Plain words, as a sender posts them.');
    expect(await consoleMapped(answer.body.jobs[0]?.jobId as string)).toMatchObject({
      status: 200,
      body: { data: { Title: 'A text', Body: 'Plain words, as a sender posts them.' } },
    });
  });

  it('refuses XML nested past the limit with 400 problem+json (a 5xx would be retried forever)', async () => {
    const body = Buffer.from(`<order>${'<a>'.repeat(300)}${'</a>'.repeat(300)}</order>`);
    const answer = await post('orders-xml', 'intake/xml', body, 'application/xml');
    expect(answer).toMatchObject({
      status: 400,
      contentType: 'application/problem+json',
      body: {
        type: 'urn:docrelay:problem:malformed-body',
        detail: 'The XML nests deeper than 200 elements.',
      },
    });
  });
});

describe('a sender described only in YAML (scheme: hmac)', () => {
  const sign = async (body: Buffer, id: string, timestamp: number) => {
    const secret = await t.secret('intake/described');
    const mac = createHmac('sha512', secret).update(`${id}.${timestamp}.`).update(body).digest('base64');
    return {
      'content-type': 'application/json',
      'x-acme-id': id,
      'x-acme-timestamp': String(timestamp),
      'x-acme-signature': `v1=${mac}`,
    };
  };

  it('verifies it, deduplicates by its id header, and refuses a stale timestamp', async () => {
    const now = Math.floor(Date.now() / 1000);
    const body = Buffer.from(JSON.stringify({ title: 'Described in YAML' }));
    const first = await t.post('described', body, await sign(body, 'evt-1', now));
    expect(first).toMatchObject({ status: 202, body: { deliveryId: 'evt-1' } });
    const again = await t.post('described', body, await sign(body, 'evt-1', now));
    expect(again).toMatchObject({ status: 200, body: { deliveryId: 'evt-1', duplicate: true } });
    const other = Buffer.from(JSON.stringify({ title: 'Another' }));
    const stale = await t.post('described', other, await sign(other, 'evt-2', now - 3600));
    expect(stale.status).toBe(401);
    const forged = await t.post('described', other, {
      ...(await sign(other, 'evt-3', now)),
      'x-acme-id': 'evt-4',
    });
    expect(forged.status).toBe(401);
    expect(await storedText(first)).toContain('Described in YAML');
  });
});

/** Twilio's signature as it documents it: HMAC-SHA1 (base64) of the URL, then each field's name and value by name. */
function twilioSignature(secret: string, url: string, fields: Record<string, string>): string {
  const signed = Object.keys(fields)
    .sort()
    .reduce((text, name) => text + name + fields[name], url);
  return createHmac('sha1', secret).update(signed).digest('base64');
}

/** One request to the stack over loopback with the headers given, Host included (as a tunnel forwards it). */
const viaHost = (method: string, path: string, headers: Record<string, string>, body = '') =>
  rawText(t.url, method, path, headers, body);

describe('a sender that signs the URL (twilio), over plain http', () => {
  it('accepts a delivery signed for the http URL the local stack serves', async () => {
    const secret = await t.secret('intake/twilio');
    const url = `${t.url}/v1/hooks/sms`;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/hooks\/sms$/);
    const fields = { From: '+15551234567', Body: 'Signed for http' };
    const signature = twilioSignature(secret, url, fields);
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': signature,
      },
      body: new URLSearchParams(fields).toString(),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('<Response/>');
    const [job] = (await t.getJobs('?integration=sms')).jobs;
    const [view] = await t.waitForJobs([job?.jobId as string]);
    expect(view?.status).toBe('stored');
  });
});

describe('a sender behind a local tunnel (publicUrl)', () => {
  const host = 'abc.tunnel.test';

  it("accepts a delivery forwarded with the publicUrl's Host and signed for that URL", async () => {
    const secret = await t.secret('intake/twilio');
    const fields = { From: '+15557654321', Body: 'Through a tunnel' };
    const answer = await viaHost(
      'POST',
      '/v1/hooks/sms-tunnel',
      {
        host,
        'x-forwarded-proto': 'https',
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': twilioSignature(secret, `https://${host}/v1/hooks/sms-tunnel`, fields),
      },
      new URLSearchParams(fields).toString(),
    );
    expect(answer).toEqual({ status: 200, body: '<Response/>' });
    expect((await t.getJobs('?integration=sms-tunnel')).jobs).toHaveLength(1);
  });

  it("keeps the jobs API, the console and the other routes off the publicUrl's host (421)", async () => {
    for (const path of ['/v1/jobs', '/_console/info', '/healthz', '/']) {
      const answer = await viaHost('GET', path, { host });
      expect({ path, status: answer.status }).toEqual({ path, status: 421 });
      expect(JSON.parse(answer.body)).toMatchObject({ type: 'urn:docrelay:problem:misdirected-request' });
    }
    expect((await viaHost('POST', '/v1/hooks/sms', { host: 'other.tunnel.test' })).status).toBe(421);
  });
});

describe('challenges', () => {
  it("answers Slack's url_verification with its challenge and makes no job", async () => {
    const secret = await t.secret('intake/slack');
    const body = Buffer.from(JSON.stringify({ type: 'url_verification', challenge: 'c-123', token: 'x' }));
    const ts = String(Math.floor(Date.now() / 1000));
    const mac = createHmac('sha256', secret).update(`v0:${ts}:`).update(body).digest('hex');
    const before = await t.queueCounts();
    const answer = await t.post('slack-app', body, {
      'content-type': 'application/json',
      'x-slack-request-timestamp': ts,
      'x-slack-signature': `v0=${mac}`,
    });
    expect(answer).toMatchObject({ status: 200, body: { challenge: 'c-123' } });
    expect(await t.queueCounts()).toEqual(before);
    expect((await t.getJobs('?integration=slack-app')).jobs).toEqual([]);
  });
});
