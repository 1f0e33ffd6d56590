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
  type VerifyConfig,
  verifyDelivery,
} from '../../../functions/senders';
import type { VerifyOptions } from '../../../functions/senders/types';
import { BODY, NOW, RESERIALISED, TEST_URL } from './fixtures';

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

/** Schemes whose signature covers the body (a token proves only that the sender knows the secret). */
const signsBody = (scheme: SenderScheme): boolean => scheme.takesSecret && scheme.name !== 'token';

/** Schemes whose sender signs inside the body: `docrelay send` cannot sign as them (their own tests sign). */
const SIGNS_INSIDE_BODY = new Set(['sns']);
const HEADER_SIGNED = SENDERS.filter((scheme) => !SIGNS_INSIDE_BODY.has(scheme.name));

describe('the sender registry', () => {
  it('lists each scheme once, under the name its module gives it', () => {
    expect(new Set(SENDER_SCHEMES).size).toBe(SENDERS.length);
    for (const scheme of SENDERS) expect(senderScheme(scheme.name)).toBe(scheme);
  });

  it('finds no scheme for unknown names, including Object.prototype members', () => {
    for (const name of ['gitlab', 'constructor', '__proto__', 'toString', 'hasOwnProperty', '']) {
      expect(senderScheme(name)).toBeUndefined();
    }
  });

  it.each(HEADER_SIGNED.map((scheme) => [scheme.name, scheme] as const))(
    '%s verifies what it signs, and only that',
    (_name, scheme) => {
      const config = configFor(scheme);
      const secrets = secretsFor(scheme);
      const headers = signDelivery({ config, secrets, rawBody: BODY, now: NOW, newId: () => 'id-1' });
      for (const name of Object.keys(headers)) expect(name).toBe(name.toLowerCase());
      const verified = verifyDelivery({
        rawBody: BODY,
        headers,
        config,
        secrets,
        now: NOW,
        url: TEST_URL,
        method: 'POST',
      });
      expect(verified.scheme).toBe(scheme.name);
      if (scheme.deliveryId !== undefined && 'header' in scheme.deliveryId) {
        expect(verified.deliveryId).toBe(headers[scheme.deliveryId.header]);
      }
      if (signsBody(scheme)) {
        expect(() =>
          verifyDelivery({
            rawBody: RESERIALISED,
            headers,
            config,
            secrets,
            now: NOW,
            url: TEST_URL,
            method: 'POST',
          }),
        ).toThrow(SignatureError);
      }
      if (scheme.takesSecret) {
        expect(() =>
          verifyDelivery({
            rawBody: BODY,
            headers,
            config,
            secrets: secretsFor(scheme),
            now: NOW,
            url: TEST_URL,
            method: 'POST',
          }),
        ).toThrow(SignatureError);
      }
    },
  );

  it.each(HEADER_SIGNED.map((scheme) => [scheme.name, scheme] as const))(
    '%s: nothing it signs with survives redaction, and its secret headers are lower-case',
    (_name, scheme) => {
      for (const header of scheme.secretHeaders) expect(header).toBe(header.toLowerCase());
      const config = configFor(scheme);
      const headers = signDelivery({
        config,
        secrets: secretsFor(scheme),
        rawBody: BODY,
        now: NOW,
        url: TEST_URL,
        method: 'POST',
      });
      const kept = redactHeaders(headers, config);
      const secretNames = [...scheme.secretHeaders, ...(config.header === undefined ? [] : [config.header])];
      // Each scheme signs with at least one secret header; delivery ids and timestamps may stay.
      expect(Object.keys(headers).filter((name) => secretNames.includes(name)).length).toBe(
        scheme.takesSecret ? 1 : 0,
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
    expect(VerifyConfigSchema.safeParse({ scheme: 'gitlab', secret: 's' }).success).toBe(false);
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

  it.each(SENDERS.map((scheme) => [scheme.name, scheme] as const))(
    '%s: the config takes exactly its options, fills its defaults and refuses its secret values as names',
    (_name, scheme) => {
      const base = configFor(scheme);
      for (const [option, value] of Object.entries(SAMPLE_OPTIONS)) {
        const result = VerifyConfigSchema.safeParse({ ...base, [option]: value });
        const rule = scheme.options[option as keyof VerifyOptions];
        if (rule !== undefined) {
          expect(result.success).toBe(rule.mustBe === undefined || rule.mustBe === value);
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

  it.each(SENDERS.map((scheme) => [scheme.name, scheme] as const))(
    "%s: senderDeliveryId reads the sender's own id where the scheme says it is",
    (_name, scheme) => {
      const config = configFor(scheme);
      const source = scheme.deliveryId;
      const headers = { 'x-github-delivery': 'h', 'x-shopify-webhook-id': 'h', 'webhook-id': 'h' };
      const body = { id: 'b', event_id: 'b' };
      if (source === undefined) {
        expect(senderDeliveryId(config, { headers: { [scheme.name]: 'h' }, body })).toBeUndefined();
      } else if ('header' in source) {
        expect(senderDeliveryId(config, { headers: { [source.header]: 'id-7' }, body })).toBe('id-7');
        expect(senderDeliveryId(config, { headers: {}, body: { [source.header]: 'x' } })).toBeUndefined();
      } else {
        expect(senderDeliveryId(config, { headers, body: { [source.bodyField]: 'id-7' } })).toBe('id-7');
        expect(senderDeliveryId(config, { headers, body: [] })).toBeUndefined();
        expect(senderDeliveryId(config, { headers, body: null })).toBeUndefined();
        // Own properties only.
        expect(senderDeliveryId(config, { headers, body: Object.create({ [source.bodyField]: 'x' }) })).toBe(
          undefined,
        );
      }
    },
  );
});
