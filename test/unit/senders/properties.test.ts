import { createHmac, generateKeyPairSync, randomBytes, sign as signEd25519 } from 'node:crypto';
import fc from 'fast-check';
import type { VerifyConfig } from '../../../functions/senders';
import { SignatureError, VerifyConfigError, verifyDelivery } from '../../../functions/senders';
import { expectNoLeak, HOOK_URL, NOW, NOW_S, randomSecret, thrown } from './fixtures';

const secret = randomSecret('whsec_');
const swSecret = `whsec_${randomBytes(32).toString('base64')}`;
const ed = generateKeyPairSync('ed25519');
const whpk = `whpk_${Buffer.from(ed.publicKey.export({ format: 'jwk' }).x ?? '', 'base64url').toString('base64')}`;

/** Every signing configuration, with the secrets it is given. */
const configs: { config: VerifyConfig; secrets: string[] }[] = [
  { config: { scheme: 'github' }, secrets: [secret] },
  { config: { scheme: 'stripe' }, secrets: [secret] },
  { config: { scheme: 'shopify' }, secrets: [secret] },
  { config: { scheme: 'slack' }, secrets: [secret] },
  { config: { scheme: 'standard-webhooks' }, secrets: [swSecret, whpk] },
  { config: { scheme: 'hmac-sha256', header: 'X-Signature' }, secrets: [secret] },
  {
    config: { scheme: 'hmac-sha256', header: 'X-Signature', encoding: 'base64', prefix: 'sha256=' },
    secrets: [secret],
  },
  { config: { scheme: 'token' }, secrets: [secret] },
  { config: { scheme: 'token', header: 'X-Signature' }, secrets: [secret] },
  { config: { scheme: 'none' }, secrets: [] },
];

const timestamp = fc.oneof(
  fc.integer({ min: NOW_S - 1000, max: NOW_S + 1000 }).map(String),
  fc.string({ maxLength: 14 }),
);
const hex32 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex'));
const b64of = (n: number) =>
  fc.uint8Array({ minLength: n, maxLength: n }).map((b) => Buffer.from(b).toString('base64'));
/** Header values from pure noise to values shaped exactly like a real signature (but not one). */
const headerValue = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: 'binary', maxLength: 80 }),
  hex32,
  hex32.map((h) => `sha256=${h}`),
  hex32.map((h) => `v0=${h}`),
  b64of(32),
  b64of(32).map((b) => `sha256=${b}`),
  fc
    .tuple(timestamp, fc.array(hex32, { maxLength: 3 }))
    .map(([t, v]) => [`t=${t}`, ...v.map((s) => `v1=${s}`)].join(',')),
  fc
    .array(
      fc.oneof(
        b64of(32).map((b) => `v1,${b}`),
        b64of(64).map((b) => `v1a,${b}`),
      ),
      { maxLength: 3 },
    )
    .map((list) => list.join(' ')),
  fc.string({ maxLength: 40 }).map((t) => `Bearer ${t}`),
  timestamp,
);
const headers = fc.record(
  {
    'x-hub-signature-256': headerValue,
    'x-github-delivery': headerValue,
    'stripe-signature': headerValue,
    'x-shopify-hmac-sha256': headerValue,
    'x-slack-signature': headerValue,
    'x-slack-request-timestamp': timestamp,
    'webhook-id': headerValue,
    'webhook-timestamp': timestamp,
    'webhook-signature': headerValue,
    authorization: headerValue,
    'x-signature': headerValue,
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  fc.uint8Array({ maxLength: 1024 }).map((b) => Buffer.from(b)),
  fc.json().map((j) => Buffer.from(j)),
);

describe('verification properties', () => {
  it('never accepts random bodies and headers, and only ever throws SignatureError or VerifyConfigError', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...configs),
        body,
        headers,
        ({ config, secrets }, rawBody, randomHeaders) => {
          const verifyInput = {
            config,
            secrets,
            rawBody,
            headers: randomHeaders as Record<string, string>,
            now: NOW,
            url: HOOK_URL,
            method: 'POST',
          };
          const error = thrown(() => verifyDelivery(verifyInput));
          expect(error instanceof SignatureError || error instanceof VerifyConfigError).toBe(true);
          // 16 characters: shorter random text can spell a word of a message ("signature") by chance.
          expectNoLeak(error, verifyInput, [], 16);
        },
      ),
      { numRuns: 1000, seed: 20261126 },
    );
  });

  /** Real signatures over `body`, one per scheme, made the way each sender documents. */
  const signers: {
    config: VerifyConfig;
    secrets: string[];
    sign: (body: Buffer) => Record<string, string>;
  }[] = [
    {
      config: { scheme: 'github' },
      secrets: [secret],
      sign: (b) => ({
        'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(b).digest('hex')}`,
      }),
    },
    {
      config: { scheme: 'stripe' },
      secrets: [secret],
      sign: (b) => ({
        'stripe-signature': `t=${NOW_S},v1=${createHmac('sha256', secret).update(`${NOW_S}.`).update(b).digest('hex')}`,
      }),
    },
    {
      config: { scheme: 'shopify' },
      secrets: [secret],
      sign: (b) => ({ 'x-shopify-hmac-sha256': createHmac('sha256', secret).update(b).digest('base64') }),
    },
    {
      config: { scheme: 'slack' },
      secrets: [secret],
      sign: (b) => ({
        'x-slack-request-timestamp': String(NOW_S),
        'x-slack-signature': `v0=${createHmac('sha256', secret).update(`v0:${NOW_S}:`).update(b).digest('hex')}`,
      }),
    },
    {
      config: { scheme: 'standard-webhooks' },
      secrets: [swSecret],
      sign: (b) => ({
        'webhook-id': 'msg_1',
        'webhook-timestamp': String(NOW_S),
        'webhook-signature': `v1,${createHmac('sha256', Buffer.from(swSecret.slice(6), 'base64'))
          .update(`msg_1.${NOW_S}.`)
          .update(b)
          .digest('base64')}`,
      }),
    },
    {
      config: { scheme: 'standard-webhooks' },
      secrets: [whpk],
      sign: (b) => ({
        'webhook-id': 'msg_1',
        'webhook-timestamp': String(NOW_S),
        'webhook-signature': `v1a,${signEd25519(null, Buffer.concat([Buffer.from(`msg_1.${NOW_S}.`), b]), ed.privateKey).toString('base64')}`,
      }),
    },
    {
      config: { scheme: 'hmac-sha256', header: 'X-Signature', encoding: 'base64', prefix: 'sha256=' },
      secrets: [secret],
      sign: (b) => ({ 'x-signature': `sha256=${createHmac('sha256', secret).update(b).digest('base64')}` }),
    },
  ];

  it('accepts a valid signature over any bytes, and refuses the same signature once any one byte changes', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...signers),
        fc.uint8Array({ minLength: 1, maxLength: 2048 }).map((b) => Buffer.from(b)),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        ({ config, secrets, sign }, rawBody, position, xor) => {
          const signed = sign(rawBody);
          expect(
            verifyDelivery({
              config,
              secrets,
              rawBody,
              headers: signed,
              now: NOW,
              url: HOOK_URL,
              method: 'POST',
            }).scheme,
          ).toBe(config.scheme);

          const tampered = Buffer.from(rawBody);
          const index = position % tampered.length;
          tampered[index] = (tampered[index] ?? 0) ^ xor;
          const verifyInput = {
            config,
            secrets,
            rawBody: tampered,
            headers: signed,
            now: NOW,
            url: HOOK_URL,
            method: 'POST',
          };
          const error = thrown(() => verifyDelivery(verifyInput));
          expect(error).toBeInstanceOf(SignatureError);
          expect((error as SignatureError).code).toBe('SIGNATURE_INVALID');
          expectNoLeak(error, verifyInput, Object.values(sign(tampered)), 16);
        },
      ),
      { numRuns: 500, seed: 20261126 },
    );
  });

  it('refuses a valid signature presented with a body that has extra bytes appended or removed', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...signers),
        fc.uint8Array({ minLength: 1, maxLength: 512 }).map((b) => Buffer.from(b)),
        fc.oneof(fc.constant(Buffer.from(' ')), fc.constant(Buffer.from('\n')), fc.constant(Buffer.alloc(0))),
        ({ config, secrets, sign }, rawBody, suffix) => {
          const changed = suffix.length === 0 ? rawBody.subarray(0, -1) : Buffer.concat([rawBody, suffix]);
          const error = thrown(() =>
            verifyDelivery({
              config,
              secrets,
              rawBody: changed,
              headers: sign(rawBody),
              now: NOW,
              url: HOOK_URL,
              method: 'POST',
            }),
          );
          expect((error as SignatureError).code).toBe('SIGNATURE_INVALID');
        },
      ),
      { numRuns: 300, seed: 20261126 },
    );
  });
});
