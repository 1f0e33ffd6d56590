/**
 * The hostile-input corpus (issue 6, "Bad input"): requests an attacker on the internet can send to the public
 * webhook URL, over real HTTP to an in-process local stack with its workers stopped. Every refused request
 * must be answered with the documented status and a problem+json body, enqueue nothing and write no record;
 * the inputs that may be "handled harmlessly" must be accepted only with a valid signature and must leave
 * Object.prototype untouched, through ingest and the worker alike; and the stack must still work afterwards.
 */
import { generateKeyPairSync, randomBytes, randomUUID, sign as signEd25519 } from 'node:crypto';
import { EventEmitter } from 'node:events';
import {
  CONFIGURED_IDS,
  type Headers,
  noteBody,
  type ProblemBody,
  problemOf,
  prototypeShape,
  type RawRequest,
  type RawResponse,
  rawRequest,
  SEC,
  SEC_MAX_BODY_BYTES,
  SECRET_NAMES,
  type SecurityStack,
  signGithubBody,
  signHmacBody,
  signShopifyBody,
  signSlackBody,
  signStandardBody,
  signStripeBody,
  signTokenBody,
  startSecurityStack,
} from './helpers/security-harness';
import { waitForJobs } from './helpers/settle';

jest.setTimeout(60_000);

let t: SecurityStack;

// The test's realm and Node's own realm (request headers are built there) each have an Object.prototype.
const outerObjectPrototype = Object.getPrototypeOf(EventEmitter.prototype) as object;
const shapeBefore = { inner: prototypeShape(Object.prototype), outer: prototypeShape(outerObjectPrototype) };

beforeAll(async () => {
  t = await startSecurityStack({ startWorkers: false });
});

afterAll(async () => {
  await t?.dispose();
});

/** What a case's request is built from: the running stack's secrets. */
interface Ctx {
  secret(name: string): string;
}

/** One hostile request and the answer it must get. */
interface RefusedCase {
  readonly name: string;
  readonly request: (ctx: Ctx) => RawRequest;
  readonly status: number | readonly number[];
  readonly check?: (response: RawResponse, problem: ProblemBody) => void;
}

const hook = (integration: string, suffix = ''): string => `/v1/hooks/${integration}${suffix}`;
const post = (integration: string, body: Buffer, headers: Headers): RawRequest => ({
  path: hook(integration),
  headers,
  body,
});
const without = (headers: Headers, ...names: string[]): Headers =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !names.includes(name)));
const hoursAgo = (h: number): Date => new Date(Date.now() - h * 3_600_000);
const hex64 = (): string => randomBytes(32).toString('hex');
const otherSecret = (): string => `dev_${randomBytes(24).toString('hex')}`;
const otherWhsec = (): string => `whsec_${randomBytes(24).toString('base64')}`;
/** The same JSON value, re-serialised with other spacing: a receiver that re-serialises would accept it. */
const pretty = (body: Buffer): Buffer =>
  Buffer.from(JSON.stringify(JSON.parse(body.toString('utf8')), null, 2));
const github = (ctx: Ctx, body: Buffer, headers: Headers = {}): RawRequest =>
  post(SEC.github, body, { ...signGithubBody(body, ctx.secret(SECRET_NAMES.githubNew)), ...headers });

const is401 = (slug: 'invalid-signature' | 'stale-timestamp') => (_r: RawResponse, p?: ProblemBody) => {
  expect(p?.type).toBe(`urn:docrelay:problem:${slug}`);
};

/** The answer to an unknown integration, captured by its case, to compare the events-only one with. */
let unknownAnswer: string | undefined;
const noIdsIn = (response: RawResponse): void => {
  for (const id of CONFIGURED_IDS) expect(response.text).not.toContain(id);
  // No "did you mean": nothing in the body beyond the fixed problem fields.
  expect(response.text.toLowerCase()).not.toContain('did you mean');
};

const ed25519 = generateKeyPairSync('ed25519');

const refused: readonly RefusedCase[] = [
  // --- signatures: GitHub -------------------------------------------------------------------------------
  {
    name: 'github: no signature header',
    request: (ctx) => {
      const body = noteBody();
      return post(
        SEC.github,
        body,
        without(signGithubBody(body, ctx.secret(SECRET_NAMES.githubNew)), 'x-hub-signature-256'),
      );
    },
    status: 401,
    check: is401('invalid-signature'),
  },
  {
    name: 'github: a well-formed but wrong signature',
    request: (ctx) => github(ctx, noteBody(), { 'x-hub-signature-256': `sha256=${hex64()}` }),
    status: 401,
    check: is401('invalid-signature'),
  },
  {
    name: 'github: signed with a secret that is not configured',
    request: () => {
      const body = noteBody();
      return post(SEC.github, body, signGithubBody(body, otherSecret()));
    },
    status: 401,
  },
  {
    name: "github: signed with another integration's secret",
    request: (ctx) => {
      const body = noteBody();
      return post(SEC.github, body, signGithubBody(body, ctx.secret(SECRET_NAMES.mapFail)));
    },
    status: 401,
  },
  {
    name: 'github: signature over the compact body, the same JSON re-serialised sent',
    request: (ctx) => {
      const body = noteBody();
      return post(SEC.github, pretty(body), signGithubBody(body, ctx.secret(SECRET_NAMES.githubNew)));
    },
    status: 401,
  },
  {
    name: 'github: malformed header (not hex)',
    request: (ctx) => github(ctx, noteBody(), { 'x-hub-signature-256': 'sha256=zz-not-hex' }),
    status: 401,
  },
  {
    name: 'github: only the legacy SHA-1 header, correctly computed over the body',
    request: (ctx) => {
      const body = noteBody();
      const signed = signGithubBody(body, ctx.secret(SECRET_NAMES.githubNew));
      return post(SEC.github, body, {
        ...without(signed, 'x-hub-signature-256'),
        'x-hub-signature': `sha1=${hex64().slice(0, 40)}`,
      });
    },
    status: 401,
  },
  {
    name: 'github: an empty signature header',
    request: (ctx) => github(ctx, noteBody(), { 'x-hub-signature-256': '' }),
    status: 401,
  },
  {
    name: 'github: the signature header sent twice (both wrong)',
    request: (ctx) => {
      const body = noteBody();
      const signed = without(signGithubBody(body, ctx.secret(SECRET_NAMES.githubNew)), 'x-hub-signature-256');
      return {
        path: hook(SEC.github),
        headers: { ...signed, 'x-hub-signature-256': [`sha256=${hex64()}`, `sha256=${hex64()}`] },
        body,
      };
    },
    status: 401,
  },
  {
    name: 'github: a valid signature in the query string instead of the header',
    request: (ctx) => {
      const body = noteBody();
      const signed = signGithubBody(body, ctx.secret(SECRET_NAMES.githubNew));
      return {
        path: `${hook(SEC.github)}?x-hub-signature-256=${encodeURIComponent(signed['x-hub-signature-256'] ?? '')}`,
        headers: without(signed, 'x-hub-signature-256'),
        body,
      };
    },
    status: 401,
  },
  // --- signatures: Stripe -------------------------------------------------------------------------------
  {
    name: 'stripe: no Stripe-Signature',
    request: () => post(SEC.stripe, noteBody(), { 'content-type': 'application/json' }),
    status: 401,
  },
  {
    name: 'stripe: signed with another secret',
    request: () => {
      const body = noteBody();
      return post(SEC.stripe, body, signStripeBody(body, otherSecret()));
    },
    status: 401,
  },
  {
    name: 'stripe: malformed header (t is not a number)',
    request: () =>
      post(SEC.stripe, noteBody(), {
        'content-type': 'application/json',
        'stripe-signature': `t=abc,v1=${hex64()}`,
      }),
    status: 401,
  },
  {
    name: 'stripe: a timestamp and no v1 signature',
    request: () =>
      post(SEC.stripe, noteBody(), {
        'content-type': 'application/json',
        'stripe-signature': `t=${Math.floor(Date.now() / 1000)},v0=${hex64()}`,
      }),
    status: 401,
  },
  {
    name: 'stripe: 200 wrong v1 values in one header',
    request: () =>
      post(SEC.stripe, noteBody(), {
        'content-type': 'application/json',
        'stripe-signature': [
          `t=${Math.floor(Date.now() / 1000)}`,
          ...Array.from({ length: 200 }, () => `v1=${hex64()}`),
        ].join(','),
      }),
    status: 401,
  },
  {
    name: 'stripe: a correct signature an hour old (stale)',
    request: (ctx) => {
      const body = noteBody();
      return post(SEC.stripe, body, signStripeBody(body, ctx.secret(SECRET_NAMES.stripe), hoursAgo(1)));
    },
    status: 401,
    check: is401('stale-timestamp'),
  },
  {
    name: 'stripe: a correct signature an hour in the future',
    request: (ctx) => {
      const body = noteBody();
      return post(SEC.stripe, body, signStripeBody(body, ctx.secret(SECRET_NAMES.stripe), hoursAgo(-1)));
    },
    status: 401,
    check: is401('stale-timestamp'),
  },
  {
    name: 'stripe: signature over the compact body, re-serialised body sent',
    request: (ctx) => {
      const body = noteBody();
      return post(SEC.stripe, pretty(body), signStripeBody(body, ctx.secret(SECRET_NAMES.stripe)));
    },
    status: 401,
  },
  // --- signatures: Shopify ------------------------------------------------------------------------------
  {
    name: 'shopify: no X-Shopify-Hmac-Sha256',
    request: () => post(SEC.shopify, noteBody(), { 'content-type': 'application/json' }),
    status: 401,
  },
  {
    name: 'shopify: signed with another secret',
    request: () => {
      const body = noteBody();
      return post(SEC.shopify, body, signShopifyBody(body, otherSecret()));
    },
    status: 401,
  },
  {
    name: 'shopify: the right HMAC in hex instead of base64',
    request: (ctx) => {
      const body = noteBody();
      const signed = signShopifyBody(body, ctx.secret(SECRET_NAMES.shopify));
      const hex = Buffer.from(signed['x-shopify-hmac-sha256'] ?? '', 'base64').toString('hex');
      return post(SEC.shopify, body, { ...signed, 'x-shopify-hmac-sha256': hex });
    },
    status: 401,
  },
  // --- signatures: Slack ----------------------------------------------------------------------------------
  {
    name: 'slack: a signature without X-Slack-Request-Timestamp',
    request: (ctx) => {
      const body = noteBody();
      return post(
        SEC.slack,
        body,
        without(signSlackBody(body, ctx.secret(SECRET_NAMES.slack)), 'x-slack-request-timestamp'),
      );
    },
    status: 401,
  },
  {
    name: 'slack: a correct signature an hour old (stale)',
    request: (ctx) => {
      const body = noteBody();
      return post(SEC.slack, body, signSlackBody(body, ctx.secret(SECRET_NAMES.slack), hoursAgo(1)));
    },
    status: 401,
    check: is401('stale-timestamp'),
  },
  {
    name: 'slack: a correct signature an hour in the future',
    request: (ctx) => {
      const body = noteBody();
      return post(SEC.slack, body, signSlackBody(body, ctx.secret(SECRET_NAMES.slack), hoursAgo(-1)));
    },
    status: 401,
    check: is401('stale-timestamp'),
  },
  {
    name: 'slack: malformed signature version (v1= instead of v0=)',
    request: (ctx) => {
      const body = noteBody();
      const signed = signSlackBody(body, ctx.secret(SECRET_NAMES.slack));
      return post(SEC.slack, body, {
        ...signed,
        'x-slack-signature': (signed['x-slack-signature'] ?? '').replace('v0=', 'v1='),
      });
    },
    status: 401,
  },
  {
    name: 'slack: signed with another secret',
    request: () => {
      const body = noteBody();
      return post(SEC.slack, body, signSlackBody(body, otherSecret()));
    },
    status: 401,
  },
  // --- signatures: Standard Webhooks ----------------------------------------------------------------------
  {
    name: 'standard-webhooks: no webhook-signature',
    request: (ctx) => {
      const body = noteBody();
      return post(
        SEC.standard,
        body,
        without(signStandardBody(body, ctx.secret(SECRET_NAMES.standard)), 'webhook-signature'),
      );
    },
    status: 401,
  },
  {
    name: 'standard-webhooks: no webhook-id',
    request: (ctx) => {
      const body = noteBody();
      return post(
        SEC.standard,
        body,
        without(signStandardBody(body, ctx.secret(SECRET_NAMES.standard)), 'webhook-id'),
      );
    },
    status: 401,
  },
  {
    name: 'standard-webhooks: a correct signature an hour old (stale)',
    request: (ctx) => {
      const body = noteBody();
      return post(
        SEC.standard,
        body,
        signStandardBody(body, ctx.secret(SECRET_NAMES.standard), `msg_${randomUUID()}`, hoursAgo(1)),
      );
    },
    status: 401,
    check: is401('stale-timestamp'),
  },
  {
    name: 'standard-webhooks: a correct signature an hour in the future',
    request: (ctx) => {
      const body = noteBody();
      return post(
        SEC.standard,
        body,
        signStandardBody(body, ctx.secret(SECRET_NAMES.standard), `msg_${randomUUID()}`, hoursAgo(-1)),
      );
    },
    status: 401,
    check: is401('stale-timestamp'),
  },
  {
    name: 'standard-webhooks: malformed signatures (unknown version, empty value)',
    request: (ctx) => {
      const body = noteBody();
      const signed = signStandardBody(body, ctx.secret(SECRET_NAMES.standard));
      return post(SEC.standard, body, { ...signed, 'webhook-signature': `v2,${hex64()} v1,` });
    },
    status: 401,
  },
  {
    name: 'standard-webhooks: signed with another whsec_ secret',
    request: () => {
      const body = noteBody();
      return post(SEC.standard, body, signStandardBody(body, otherWhsec()));
    },
    status: 401,
  },
  {
    name: 'standard-webhooks: a v1a (ed25519) signature when no public key is configured',
    request: () => {
      const body = noteBody();
      const id = `msg_${randomUUID()}`;
      const ts = String(Math.floor(Date.now() / 1000));
      const signature = signEd25519(
        null,
        Buffer.from(`${id}.${ts}.${body.toString('utf8')}`),
        ed25519.privateKey,
      );
      return post(SEC.standard, body, {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': ts,
        'webhook-signature': `v1a,${signature.toString('base64')}`,
      });
    },
    status: 401,
  },
  // --- signatures: generic HMAC and token -----------------------------------------------------------------
  {
    name: 'hmac-sha256: the right HMAC without the configured prefix',
    request: (ctx) => {
      const body = noteBody();
      const signed = signHmacBody(body, ctx.secret(SECRET_NAMES.hmac));
      return post(SEC.hmac, body, {
        ...signed,
        'x-signature': (signed['x-signature'] ?? '').replace('sha256=', 'sha1='),
      });
    },
    status: 401,
  },
  {
    name: 'hmac-sha256: the right HMAC in base64 when hex is configured',
    request: (ctx) => {
      const body = noteBody();
      const signed = signHmacBody(body, ctx.secret(SECRET_NAMES.hmac));
      const hex = (signed['x-signature'] ?? '').slice('sha256='.length);
      return post(SEC.hmac, body, {
        ...signed,
        'x-signature': `sha256=${Buffer.from(hex, 'hex').toString('base64')}`,
      });
    },
    status: 401,
  },
  {
    name: 'hmac-sha256: signed with another secret',
    request: () => {
      const body = noteBody();
      return post(SEC.hmac, body, signHmacBody(body, otherSecret()));
    },
    status: 401,
  },
  {
    name: 'token: no Authorization header',
    request: () => post(SEC.token, noteBody(), { 'content-type': 'application/json' }),
    status: 401,
  },
  {
    name: 'token: a wrong bearer token',
    request: () => post(SEC.token, noteBody(), signTokenBody(noteBody(), otherSecret())),
    status: 401,
  },
  {
    name: 'token: the right token as Basic credentials',
    request: (ctx) =>
      post(SEC.token, noteBody(), {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`user:${ctx.secret(SECRET_NAMES.token)}`).toString('base64')}`,
      }),
    status: 401,
  },
  {
    name: 'token: the right token with a character appended',
    request: (ctx) =>
      post(SEC.token, noteBody(), signTokenBody(noteBody(), `${ctx.secret(SECRET_NAMES.token)}x`)),
    status: 401,
  },
  {
    name: 'token: a prefix of the right token',
    request: (ctx) =>
      post(SEC.token, noteBody(), signTokenBody(noteBody(), ctx.secret(SECRET_NAMES.token).slice(0, -1))),
    status: 401,
  },
  // --- size and media type --------------------------------------------------------------------------------
  {
    name: 'a body one byte over ingest.maxBodyBytes, unsigned',
    request: () =>
      post(SEC.github, Buffer.alloc(SEC_MAX_BODY_BYTES + 1, 0x20), { 'content-type': 'application/json' }),
    status: 413,
  },
  {
    name: 'a body over the limit with a valid signature',
    request: (ctx) => github(ctx, noteBody({ padding: 'x'.repeat(SEC_MAX_BODY_BYTES) })),
    status: 413,
  },
  // text/plain, forms and XML are bodies docrelay takes (docs/configuration.md); multipart is not, and XML
  // with a DOCTYPE (external entities, entity bombs) is refused before it is parsed.
  {
    name: 'multipart/form-data, validly signed',
    request: (ctx) => {
      const body = Buffer.from('--b\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--b--\r\n');
      return github(ctx, body, { 'content-type': 'multipart/form-data; boundary=b' });
    },
    status: 415,
  },
  {
    name: 'XML with an external entity (XXE), validly signed',
    request: (ctx) => {
      const body = Buffer.from(
        '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>',
      );
      return github(ctx, body, { 'content-type': 'application/xml' });
    },
    status: 400,
  },
  {
    name: 'XML entity bomb, validly signed',
    request: (ctx) => {
      const body = Buffer.from(
        '<?xml version="1.0"?><!DOCTYPE b [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><b>&b;&b;&b;</b>',
      );
      return github(ctx, body, { 'content-type': 'text/xml' });
    },
    status: 400,
  },
  {
    name: 'no content type, validly signed',
    request: (ctx) => {
      const body = noteBody();
      return post(
        SEC.github,
        body,
        without(signGithubBody(body, ctx.secret(SECRET_NAMES.githubNew)), 'content-type'),
      );
    },
    status: 415,
  },
  {
    name: 'multipart/form-data, validly signed',
    request: (ctx) => github(ctx, noteBody(), { 'content-type': 'multipart/form-data; boundary=x' }),
    status: 415,
  },
  {
    name: 'text/json (not a JSON media type)',
    request: (ctx) => github(ctx, noteBody(), { 'content-type': 'text/json' }),
    status: 415,
  },
  // --- bodies that pass verification but are not acceptable JSON ------------------------------------------
  {
    name: 'malformed JSON, validly signed',
    request: (ctx) => github(ctx, Buffer.from('{"type":')),
    status: 400,
  },
  {
    name: 'trailing garbage after the JSON value',
    request: (ctx) => github(ctx, Buffer.concat([noteBody(), Buffer.from('x')])),
    status: 400,
  },
  {
    name: 'a NaN literal',
    request: (ctx) => github(ctx, Buffer.from('{"type":"note.created","title":NaN}')),
    status: 400,
  },
  {
    name: 'invalid UTF-8 (0xFF bytes in a string)',
    request: (ctx) =>
      github(
        ctx,
        Buffer.concat([
          Buffer.from('{"type":"note.created","title":"'),
          Buffer.from([0xff, 0xfe]),
          Buffer.from('"}'),
        ]),
      ),
    status: 400,
  },
  {
    name: 'overlong UTF-8 encoding of "/"',
    request: (ctx) =>
      github(ctx, Buffer.concat([Buffer.from('{"title":"..'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')])),
    status: 400,
  },
  {
    name: 'an encoded UTF-16 surrogate (CESU-8)',
    request: (ctx) =>
      github(
        ctx,
        Buffer.concat([Buffer.from('{"title":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]),
      ),
    status: 400,
  },
  {
    name: 'UTF-16 JSON with its BOM, declared as JSON',
    request: (ctx) =>
      github(
        ctx,
        Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"type":"note.created"}', 'utf16le')]),
      ),
    status: 400,
  },
  { name: 'an empty body, validly signed', request: (ctx) => github(ctx, Buffer.alloc(0)), status: 400 },
  {
    name: 'arrays nested 100 000 deep',
    request: (ctx) => github(ctx, Buffer.from(`${'['.repeat(100_000)}${']'.repeat(100_000)}`)),
    status: 400,
  },
  {
    name: 'objects nested 30 000 deep',
    request: (ctx) => github(ctx, Buffer.from(`${'{"a":'.repeat(30_000)}1${'}'.repeat(30_000)}`)),
    status: 400,
  },
  // --- routing --------------------------------------------------------------------------------------------
  {
    name: 'an unknown integration (no hint of which ids exist)',
    request: () => post('no-such-integration', noteBody(), { 'content-type': 'application/json' }),
    status: 404,
    check: (response) => {
      noIdsIn(response);
      unknownAnswer = response.text;
    },
  },
  {
    name: 'a near-miss of a configured id (no "did you mean")',
    request: () => post('sec-githb', noteBody(), { 'content-type': 'application/json' }),
    status: 404,
    check: noIdsIn,
  },
  {
    name: "the events-only integration's webhook URL, answered as an unknown one",
    request: (ctx) => {
      const body = noteBody();
      return post(SEC.events, body, signGithubBody(body, ctx.secret(SECRET_NAMES.githubNew)));
    },
    status: 404,
    check: (response) => {
      noIdsIn(response);
      expect(response.text).toBe(unknownAnswer);
    },
  },
  {
    name: 'integration id __proto__',
    request: () => post('__proto__', noteBody(), { 'content-type': 'application/json' }),
    status: 404,
  },
  {
    name: 'integration ids named like Object.prototype members',
    request: () => post('hasOwnProperty', noteBody(), { 'content-type': 'application/json' }),
    status: 404,
  },
  {
    name: 'an encoded traversal: /v1/hooks/..%2F..',
    request: () => ({
      path: '/v1/hooks/..%2F..',
      headers: { 'content-type': 'application/json' },
      body: noteBody(),
    }),
    status: 404,
  },
  {
    name: 'an encoded traversal ending on a configured id: ..%2Fsec-github',
    request: () => ({
      path: `/v1/hooks/..%2F${SEC.github}`,
      headers: { 'content-type': 'application/json' },
      body: noteBody(),
    }),
    status: 404,
  },
  {
    // Dot segments are removed (RFC 3986) so this names sec-token, which still wants its own token: a valid
    // GitHub signature for sec-github does not get through.
    name: 'a raw traversal from a GitHub integration to the token one, GitHub-signed',
    request: (ctx) => ({ ...github(ctx, noteBody()), path: `/v1/hooks/${SEC.github}/../${SEC.token}` }),
    status: 401,
  },
  {
    name: 'a percent-encoded configured id still needs its signature',
    request: () => ({
      path: '/v1/hooks/%73ec-github',
      headers: { 'content-type': 'application/json' },
      body: noteBody(),
    }),
    status: 401,
  },
  {
    name: 'a 10 000-character id',
    request: () => post('a'.repeat(10_000), noteBody(), { 'content-type': 'application/json' }),
    status: 404,
  },
  {
    name: 'an id with an encoded NUL and CRLF',
    request: () => ({
      path: `/v1/hooks/${SEC.github}%00%0d%0aX-Injected:%20yes`,
      headers: { 'content-type': 'application/json' },
      body: noteBody(),
    }),
    status: 404,
    check: (response) => expect(response.headers['x-injected']).toBeUndefined(),
  },
  {
    name: 'an id with malformed percent-encoding (%E0%A4%A)',
    request: () => ({
      path: '/v1/hooks/%E0%A4%A',
      headers: { 'content-type': 'application/json' },
      body: noteBody(),
    }),
    // Not a configured id: 404 like any other, or 400 for the malformed URL; never a 500.
    status: [400, 404],
  },
  // --- methods --------------------------------------------------------------------------------------------
  ...(['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const).map(
    (method): RefusedCase => ({
      name: `${method} on a webhook URL`,
      request: (ctx) => ({ ...github(ctx, noteBody()), method }),
      status: 405,
      check: (response) => expect(response.headers.allow).toBe('POST'),
    }),
  ),
  // --- headers --------------------------------------------------------------------------------------------
  {
    name: 'an 8 KB junk header and no signature',
    request: () =>
      post(SEC.github, noteBody(), { 'content-type': 'application/json', 'x-junk': 'j'.repeat(8 * 1024) }),
    status: 401,
  },
  {
    name: "a 64 KB header (refused by Node's HTTP parser, answered as problem+json)",
    request: (ctx) => github(ctx, noteBody(), { 'x-junk': 'j'.repeat(64 * 1024) }),
    status: 431,
    check: (_response, problem) =>
      expect(problem?.type).toBe('urn:docrelay:problem:request-header-fields-too-large'),
  },
  {
    name: 'injection-ish header values: traversal ids, encoded CRLF, latin-1 bytes',
    request: () =>
      post(SEC.github, noteBody(), {
        'content-type': 'application/json',
        'x-github-delivery': '../../../etc/passwd%0d%0aSet-Cookie:%20a=b',
        'x-shopify-webhook-id': `\u00ff\u00fe\${7*7}{{7*7}}`,
        'webhook-id': "'; DROP TABLE jobs; --",
      }),
    status: 401,
    check: (response) => expect(response.headers['set-cookie']).toBeUndefined(),
  },
];

describe('hostile requests are refused with problem+json, enqueue nothing and write no record', () => {
  it('the corpus has at least 40 requests', () => {
    expect(refused.length).toBeGreaterThanOrEqual(40);
  });

  it.each(refused)('$name', async (c) => {
    const secretValues = Object.values(t.secrets);
    const request = c.request({ secret: (name) => t.secret(name) });
    const itemsBefore = (await t.scanTable()).length;
    const depthBefore = await t.queueDepth();

    const response = await rawRequest(t.url, request);

    const allowed: readonly number[] = typeof c.status === 'number' ? [c.status] : c.status;
    if (!allowed.includes(response.status)) {
      throw new Error(
        `expected HTTP ${allowed.join(' or ')}, got ${response.status}: ${response.text.slice(0, 300)}`,
      );
    }
    const problem = problemOf(response);
    expect(problem.type).toMatch(/^urn:docrelay:problem:[a-z-]+$/);
    c.check?.(response, problem);
    // Nothing secret is echoed: no secret value, no header value we sent that is longer than a word.
    for (const value of secretValues) expect(response.text).not.toContain(value);
    for (const value of Object.values(request.headers ?? {}).flat()) {
      if (value.length >= 24) expect(response.text).not.toContain(value);
    }
    expect(await t.queueDepth()).toBe(depthBefore);
    expect((await t.scanTable()).length).toBe(itemsBefore);
  });
});

describe('a replayed delivery', () => {
  it('is answered 200 duplicate with the same jobs, and makes nothing new', async () => {
    const body = noteBody();
    const headers = signStandardBody(body, t.secret(SECRET_NAMES.standard));
    const first = await rawRequest(t.url, post(SEC.standard, body, headers));
    expect(first.status).toBe(202);
    const items = (await t.scanTable()).length;
    const depth = await t.queueDepth();

    const replay = await rawRequest(t.url, post(SEC.standard, body, headers));

    expect(replay.status).toBe(200);
    expect(JSON.parse(replay.text)).toEqual({ ...JSON.parse(first.text), duplicate: true });
    expect((await t.scanTable()).length).toBe(items);
    expect(await t.queueDepth()).toBe(depth);
  });

  it('is a duplicate also when re-signed later with a new timestamp (a sender retry)', async () => {
    const body = noteBody();
    const first = await rawRequest(
      t.url,
      post(SEC.stripe, body, signStripeBody(body, t.secret(SECRET_NAMES.stripe))),
    );
    expect(first.status).toBe(202);
    const items = (await t.scanTable()).length;
    const later = new Date(Date.now() + 5_000);

    const replay = await rawRequest(
      t.url,
      post(SEC.stripe, body, signStripeBody(body, t.secret(SECRET_NAMES.stripe), later)),
    );

    expect(replay.status).toBe(200);
    expect(JSON.parse(replay.text)).toMatchObject({ duplicate: true });
    expect((await t.scanTable()).length).toBe(items);
  });
});

/** Inputs that may be accepted, but only validly signed, and without touching any prototype. */
interface HarmlessCase {
  readonly name: string;
  readonly body: Buffer;
  readonly path?: string;
  readonly headers?: Headers;
  /** 202 with one job, or 200 with none (no rule saw a match). */
  readonly status: 200 | 202;
}

const harmless: readonly HarmlessCase[] = [
  {
    name: '__proto__ keys',
    body: Buffer.from('{"type":"note.created","title":"proto","__proto__":{"polluted":"yes","type":"x"}}'),
    status: 202,
  },
  {
    name: 'constructor.prototype and prototype keys',
    body: Buffer.from(
      '{"type":"note.created","title":"ctor","constructor":{"prototype":{"polluted":"yes"}},"prototype":{"polluted":"yes"}}',
    ),
    status: 202,
  },
  {
    name: 'a __proto__ object that would match the rule if it became the prototype',
    body: Buffer.from('{"__proto__":{"type":"note.created","title":"inherited"}}'),
    status: 200,
  },
  {
    name: 'duplicate keys (the last one wins)',
    body: Buffer.from('{"type":"ignored","type":"note.created","title":"first","title":"dupe"}'),
    status: 202,
  },
  {
    name: 'huge numbers (1e400, 30 digits, 5 000 digits)',
    body: Buffer.from(
      `{"type":"note.created","title":"numbers","a":1e400,"b":-1e400,"c":123456789012345678901234567890,"d":${'9'.repeat(5000)}}`,
    ),
    status: 202,
  },
  {
    name: 'a UTF-8 byte order mark before the JSON (RFC 8259 lets a parser ignore it)',
    body: Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('{"type":"note.created","title":"bom"}'),
    ]),
    status: 202,
  },
  {
    name: 'query parameters named like Object.prototype members',
    body: Buffer.from('{"type":"note.created","title":"query"}'),
    path: `/v1/hooks/${SEC.github}?__proto__=x&constructor=y&toString=z&hasOwnProperty=w&__proto__[polluted]=yes`,
    status: 202,
  },
  {
    name: 'headers named like Object.prototype members',
    body: Buffer.from('{"type":"note.created","title":"headers"}'),
    // Built from entries: a `__proto__` key in an object literal would set the prototype instead.
    headers: Object.fromEntries([
      ['__proto__', 'x'],
      ['constructor', 'y'],
      ['tostring', 'z'],
      ['valueof', 'w'],
    ]),
    status: 202,
  },
  { name: 'a JSON null body', body: Buffer.from('null'), status: 200 },
  { name: 'a JSON array body', body: Buffer.from('[1,2,3]'), status: 200 },
  { name: 'a JSON string body', body: Buffer.from('"note.created"'), status: 200 },
];

describe('inputs handled harmlessly: accepted only when validly signed, prototypes untouched', () => {
  const accepted: string[] = [];

  it.each(harmless)('$name', async (c) => {
    const unsigned = await rawRequest(t.url, {
      path: c.path ?? hook(SEC.github),
      headers: { 'content-type': 'application/json', ...c.headers },
      body: c.body,
    });
    expect(unsigned.status).toBe(401);

    const response = await rawRequest(t.url, {
      path: c.path ?? hook(SEC.github),
      headers: { ...signGithubBody(c.body, t.secret(SECRET_NAMES.githubNew)), ...c.headers },
      body: c.body,
    });

    expect({ status: response.status, body: response.text }).toEqual({
      status: c.status,
      body: expect.any(String),
    });
    const answer = JSON.parse(response.text) as { jobs: Array<{ jobId: string }> };
    expect(answer.jobs).toHaveLength(c.status === 202 ? 1 : 0);
    accepted.push(...answer.jobs.map((job) => job.jobId));
    expect(prototypeShape(Object.prototype)).toEqual(shapeBefore.inner);
    expect(prototypeShape(outerObjectPrototype)).toEqual(shapeBefore.outer);
  });

  it('the worker maps and stores those jobs without polluting any prototype', async () => {
    expect(accepted.length).toBeGreaterThanOrEqual(6);
    t.stack.startWorkers();
    const views = await waitForJobs(
      async (jobId) =>
        JSON.parse((await rawRequest(t.url, { method: 'GET', path: `/v1/jobs/${jobId}` })).text) as {
          status: string;
        },
      accepted,
      { intervalMs: 200 },
    ).finally(() => t.stack.stopWorkers());
    expect(Object.fromEntries(accepted.map((id, i) => [id, views[i]?.status]))).toEqual(
      Object.fromEntries(accepted.map((id) => [id, 'stored'])),
    );
    expect(prototypeShape(Object.prototype)).toEqual(shapeBefore.inner);
    expect(prototypeShape(outerObjectPrototype)).toEqual(shapeBefore.outer);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('console hygiene', () => {
  it('with logging SILENT, refused requests print nothing (no line per request an attacker can repeat)', async () => {
    const written: string[] = [];
    const capture = ((chunk: unknown): boolean => {
      written.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    const spies = [
      jest.spyOn(process.stdout, 'write').mockImplementation(capture),
      jest.spyOn(process.stderr, 'write').mockImplementation(capture),
    ];
    try {
      const body = noteBody();
      await rawRequest(t.url, { ...github({ secret: (n) => t.secret(n) }, body), method: 'GET' });
      await rawRequest(t.url, { ...github({ secret: (n) => t.secret(n) }, body), method: 'DELETE' });
      await rawRequest(t.url, post('no-such-integration', body, { 'content-type': 'application/json' }));
      await rawRequest(t.url, post(SEC.github, body, { 'content-type': 'application/json' }));
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(written).toEqual([]);
  });
});

describe('the process is unharmed', () => {
  it('still answers health checks and accepts a valid webhook after the corpus', async () => {
    const health = await rawRequest(t.url, { method: 'GET', path: '/healthz' });
    expect(health.status).toBe(200);
    const body = noteBody();
    const response = await rawRequest(
      t.url,
      post(SEC.token, body, signTokenBody(body, t.secret(SECRET_NAMES.token))),
    );
    expect(response.status).toBe(202);
    expect(response.headers['content-type']).toBe('application/json');
  });

  it('accepts the previous GitHub secret too while it is rotated (either configured name verifies)', async () => {
    const body = noteBody();
    const response = await rawRequest(
      t.url,
      post(SEC.github, body, signGithubBody(body, t.secret(SECRET_NAMES.githubOld))),
    );
    expect(response.status).toBe(202);
  });
});
