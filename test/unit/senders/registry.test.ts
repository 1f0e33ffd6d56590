/**
 * The registry and what derives from it: each scheme is self-consistent (it verifies what it signs), and the
 * config schema, its JSON Schema, the redaction list and the default delivery ids follow the scheme modules.
 */
import { randomBytes } from 'node:crypto';
import { buildConfigJsonSchema } from '../../../functions/config/json-schema';
import { VerifyConfigSchema } from '../../../functions/config/schema';
import {
  redactHeaders,
  SENDER_SCHEMES,
  SENDERS,
  type SenderScheme,
  SignatureError,
  senderDeliveryId,
  senderScheme,
  signDelivery,
  signedBody,
  type VerifyConfig,
  verifyDelivery,
} from '../../../functions/senders';
import type { VerifyOptions } from '../../../functions/senders/types';
import { BODY, HOOK_URL, NOW } from './fixtures';

/** A value for each option a scheme might require. */
const SAMPLE_OPTIONS: Required<VerifyOptions> = {
  header: 'X-Test-Signature',
  encoding: 'base64',
  prefix: 'sha256=',
  toleranceSeconds: 60,
  allowUnsigned: true,
  algorithm: 'sha256',
  signedContent: '{body}',
  timestampHeader: 'X-Test-Timestamp',
  idHeader: 'X-Test-Id',
  topicArn: 'arn:aws:sns:eu-west-1:123456789012:orders',
  verifyTokenSecret: 'test/verify-token',
  minSignatureVersion: 2,
};

/** A valid verify block for the scheme, through the config schema (defaults filled), with every required option. */
const configFor = (scheme: SenderScheme): VerifyConfig => {
  const block: Record<string, unknown> = { scheme: scheme.name };
  if (scheme.takesSecret) block.secret = 'docrelay/test';
  for (const [option, rule] of Object.entries(scheme.options)) {
    if (rule?.required !== undefined) {
      block[option] = rule.mustBe ?? SAMPLE_OPTIONS[option as keyof VerifyOptions];
    }
  }
  return VerifyConfigSchema.parse(block);
};

const secretsFor = (scheme: SenderScheme): string[] =>
  scheme.devSecret === undefined ? [] : [scheme.devSecret(randomBytes(24))];

/** Senders whose signature travels inside the body rather than in a header. */
const SIGNS_INSIDE_BODY = ['mailgun', 'adyen'];

/** Senders `docrelay send` cannot sign as: SNS signs with its own certificate (its tests sign). */
const UNSIGNABLE = new Set(['sns']);
const SIGNABLE = SENDERS.filter((scheme) => !UNSIGNABLE.has(scheme.name));

/**
 * Schemes whose signature covers the body bytes: a token or Basic credentials prove only that the sender
 * knows the secret, Mailgun signs its token and timestamp, not the event, and Adyen signs chosen fields.
 */
const signsBody = (scheme: SenderScheme): boolean =>
  scheme.takesSecret && !['token', 'gitlab', 'postmark', ...SIGNS_INSIDE_BODY].includes(scheme.name);

/** A body each scheme can sign: Linear's carries its signed time, Adyen's is a notification. */
const bodyFor = (scheme: SenderScheme): Buffer => {
  if (scheme.name === 'linear')
    return Buffer.from(JSON.stringify({ ...JSON.parse(BODY.toString()), webhookTimestamp: NOW.getTime() }));
  if (scheme.name === 'adyen') {
    return Buffer.from(
      JSON.stringify({
        live: 'false',
        notificationItems: [
          {
            NotificationRequestItem: {
              pspReference: 'P1',
              eventCode: 'AUTHORISATION',
              success: 'true',
              amount: { value: 100, currency: 'EUR' },
            },
          },
        ],
      }),
    );
  }
  return BODY;
};

/** The bytes and headers the scheme's sender would post, signed with the first secret. */
const signedAs = (scheme: SenderScheme, config: VerifyConfig, secrets: string[]) => {
  const sign = { config, secrets, rawBody: bodyFor(scheme), now: NOW, url: HOOK_URL, newId: () => 'id-1' };
  const rawBody = signedBody(sign);
  return { rawBody, headers: signDelivery({ ...sign, rawBody }) };
};

describe('the sender registry', () => {
  it('lists each scheme once, under the name its module gives it', () => {
    expect(new Set(SENDER_SCHEMES).size).toBe(SENDERS.length);
    for (const scheme of SENDERS) expect(senderScheme(scheme.name)).toBe(scheme);
  });

  it('finds no scheme for unknown names, including Object.prototype members', () => {
    for (const name of ['gitea', 'constructor', '__proto__', 'toString', 'hasOwnProperty', '']) {
      expect(senderScheme(name)).toBeUndefined();
    }
  });

  it.each(SIGNABLE.map((scheme) => [scheme.name, scheme] as const))(
    '%s verifies what it signs, and only that',
    (_name, scheme) => {
      const config = configFor(scheme);
      const secrets = secretsFor(scheme);
      const { rawBody, headers } = signedAs(scheme, config, secrets);
      for (const name of Object.keys(headers)) expect(name).toBe(name.toLowerCase());
      const delivery = { rawBody, headers, config, secrets, now: NOW, url: HOOK_URL, method: 'POST' };
      const verified = verifyDelivery(delivery);
      expect(verified.scheme).toBe(scheme.name);
      if (scheme.deliveryId !== undefined && 'header' in scheme.deliveryId) {
        expect(verified.deliveryId).toBe(headers[scheme.deliveryId.header]);
      }
      if (signsBody(scheme)) {
        const reserialised = Buffer.from(JSON.stringify(JSON.parse(rawBody.toString('utf8')), null, 2));
        expect(() => verifyDelivery({ ...delivery, rawBody: reserialised })).toThrow(SignatureError);
      }
      if (scheme.takesSecret) {
        expect(() => verifyDelivery({ ...delivery, secrets: secretsFor(scheme) })).toThrow(SignatureError);
      }
    },
  );

  it.each(SIGNABLE.map((scheme) => [scheme.name, scheme] as const))(
    '%s: nothing it signs with survives redaction, and its secret headers are lower-case',
    (_name, scheme) => {
      for (const header of scheme.secretHeaders) expect(header).toBe(header.toLowerCase());
      const config = configFor(scheme);
      const { headers } = signedAs(scheme, config, secretsFor(scheme));
      const kept = redactHeaders(headers, config);
      const secretNames = [...scheme.secretHeaders, ...(config.header === undefined ? [] : [config.header])];
      // Each scheme signs with one secret header (but those signing inside the body); ids and timestamps may stay.
      expect(Object.keys(headers).filter((name) => secretNames.includes(name)).length).toBe(
        scheme.takesSecret && !SIGNS_INSIDE_BODY.includes(scheme.name) ? 1 : 0,
      );
      for (const name of secretNames) expect(kept).not.toHaveProperty(name);
      for (const header of scheme.secretHeaders) {
        expect(redactHeaders({ [header]: 'x', 'content-type': 'application/json' })).toEqual({
          'content-type': 'application/json',
        });
      }
    },
  );

  it('redacts generic credentials and the configured header, keeping the rest', () => {
    const headers = {
      authorization: 'Bearer t',
      'proxy-authorization': 'Basic x',
      cookie: 'a=b',
      'x-api-key': 'k',
      'x-custom-signature': 's',
      'x-refresh-token': 't',
      'x-mine': 'm',
      'x-github-delivery': 'gh-1',
      'content-type': 'application/json',
    };
    expect(redactHeaders(headers, { header: 'X-Mine' })).toEqual({
      'x-github-delivery': 'gh-1',
      'content-type': 'application/json',
    });
    expect(redactHeaders(headers)).toHaveProperty('x-mine', 'm');
  });

  it('the config schema and its JSON Schema list exactly the registry names, in registry order', () => {
    expect(VerifyConfigSchema.safeParse({ scheme: 'gitea', secret: 's' }).success).toBe(false);
    const json = JSON.parse(buildConfigJsonSchema()) as {
      properties: {
        integrations: { items: { properties: { verify: { properties: { scheme: { enum: string[] } } } } } };
      };
    };
    expect(json.properties.integrations.items.properties.verify.properties.scheme.enum).toEqual([
      ...SENDER_SCHEMES,
    ]);
    for (const scheme of SENDERS) expect(VerifyConfigSchema.safeParse(configFor(scheme)).success).toBe(true);
  });

  it.each(SIGNABLE.map((scheme) => [scheme.name, scheme] as const))(
    '%s: the config takes exactly its options, fills its defaults and refuses its secret values as names',
    (_name, scheme) => {
      const base = configFor(scheme);
      for (const [option, value] of Object.entries(SAMPLE_OPTIONS)) {
        const result = VerifyConfigSchema.safeParse({ ...base, [option]: value });
        const rule = scheme.options[option as keyof VerifyOptions];
        if (rule !== undefined) {
          // Combinations a scheme refuses on its own (hmac: a timestamp outside signedContent) fail too.
          const combined = scheme.checkConfig?.({ ...base, [option]: value } as VerifyConfig) ?? [];
          expect(result.success).toBe(
            (rule.mustBe === undefined || rule.mustBe === value) && combined.length === 0,
          );
        } else {
          expect(result.error?.issues).toEqual([
            expect.objectContaining({
              path: [option],
              message: expect.stringMatching(
                new RegExp(`^scheme ${scheme.name} does not take ${option} \\(only `),
              ),
            }),
          ]);
        }
      }
      for (const [option, rule] of Object.entries(scheme.options)) {
        if (rule?.default !== undefined) expect(base[option as keyof VerifyOptions]).toBe(rule.default);
      }
      if (scheme.takesSecret) {
        for (const prefix of scheme.secretValuePrefixes) {
          expect(VerifyConfigSchema.safeParse({ ...base, secret: `${prefix}abc123` }).success).toBe(false);
        }
      }
    },
  );

  it.each(SIGNABLE.map((scheme) => [scheme.name, scheme] as const))(
    "%s: senderDeliveryId reads the sender's own id where the scheme says it is",
    (_name, scheme) => {
      const config = configFor(scheme);
      const source = scheme.deliveryId;
      const headers = { 'x-github-delivery': 'h', 'x-shopify-webhook-id': 'h', 'webhook-id': 'h' };
      const nested = (path: readonly string[], value: unknown): unknown =>
        path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value);
      const body = { id: 'b', event_id: 'b' };
      if (source === undefined) {
        expect(senderDeliveryId(config, { headers: { [scheme.name]: 'h' }, body })).toBeUndefined();
      } else if ('header' in source) {
        expect(senderDeliveryId(config, { headers: { [source.header]: 'id-7' }, body })).toBe('id-7');
        expect(senderDeliveryId(config, { headers: {}, body: { [source.header]: 'x' } })).toBeUndefined();
      } else {
        const path = 'bodyField' in source ? [source.bodyField] : source.bodyPath;
        expect(senderDeliveryId(config, { headers, body: nested(path, 'id-7') })).toBe('id-7');
        expect(senderDeliveryId(config, { headers, body: [] })).toBeUndefined();
        expect(senderDeliveryId(config, { headers, body: null })).toBeUndefined();
        expect(senderDeliveryId(config, { headers, body: nested(path, undefined) })).toBeUndefined();
        // Own properties only, at every level.
        const [outer = '', ...rest] = path;
        const inherited = Object.create({ [outer]: rest.length === 0 ? 'x' : nested(rest, 'x') });
        expect(senderDeliveryId(config, { headers, body: inherited })).toBeUndefined();
      }
    },
  );
});
