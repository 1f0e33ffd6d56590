/**
 * Property tests over every scheme in the registry (derived from SENDERS, none listed by hand): random
 * requests are never accepted and fail only with the scheme's own errors, without leaking what they carry;
 * what a scheme signs verifies, and once any byte of it changes it is refused, or, where the sender signs
 * less than the bytes, keeps the key that dedupes it (the delivery id or content key of the genuine one).
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { VerifyConfigSchema } from '../../../functions/config/schema';
import {
  SENDERS,
  type SenderScheme,
  SignatureError,
  senderDeliveryId,
  signDelivery,
  signedBody,
  type VerifyConfig,
  VerifyConfigError,
  type VerifyInput,
  verifyDelivery,
} from '../../../functions/senders';
import { expectNoLeak, HOOK_URL, NOW, thrown } from './fixtures';

const SEED = 20261129;

/** Values for the options a scheme requires. */
const REQUIRED: Readonly<Record<string, unknown>> = {
  header: 'X-Test-Signature',
  topicArn: 'arn:aws:sns:eu-west-1:123456789012:orders',
  verifyTokenSecret: 'test/verify-token',
};

/** A valid verify block for the scheme, through the config schema (defaults filled). */
function configFor(scheme: SenderScheme): VerifyConfig {
  const block: Record<string, unknown> = { scheme: scheme.name };
  if (scheme.takesSecret) block.secret = 'docrelay/test';
  for (const [option, rule] of Object.entries(scheme.options)) {
    if (rule?.required !== undefined) block[option] = rule.mustBe ?? REQUIRED[option];
  }
  return VerifyConfigSchema.parse(block);
}

const secretsFor = (scheme: SenderScheme): string[] =>
  scheme.devSecret === undefined ? [] : [scheme.devSecret(randomBytes(32))];

/** Every header name any scheme reads: its secret headers and id header, plus common ones. */
const KNOWN_HEADERS = [
  ...new Set(
    SENDERS.flatMap((scheme) => [
      ...scheme.secretHeaders,
      ...(scheme.deliveryId !== undefined && 'header' in scheme.deliveryId ? [scheme.deliveryId.header] : []),
    ]).concat([
      'x-test-signature',
      'authorization',
      'webhook-id',
      'webhook-timestamp',
      'x-slack-request-timestamp',
    ]),
  ),
];

const headerValue = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.uint8Array({ minLength: 20, maxLength: 64 }).map((b) => Buffer.from(b).toString('base64')),
  fc.uint8Array({ minLength: 20, maxLength: 64 }).map((b) => `sha256=${Buffer.from(b).toString('hex')}`),
  fc.integer({ min: 1_700_000_000, max: 1_900_000_000 }).map(String),
);
const randomHeaders = fc.dictionary(fc.constantFrom(...KNOWN_HEADERS), headerValue, { maxKeys: 8 });
const randomBody = fc.oneof(
  fc.uint8Array({ maxLength: 512 }).map((b) => Buffer.from(b)),
  fc.json({ maxDepth: 3 }).map((j) => Buffer.from(j)),
);

const cases = SENDERS.map((scheme) => ({ scheme, config: configFor(scheme), secrets: secretsFor(scheme) }));

/** Senders whose signature covers less than every byte: a changed byte may verify, keeping the dedupe key. */
const SIGNS_PART = new Set(['twilio', 'adyen', 'mailgun']);
/** Senders that sign nothing of the delivery (a token or Basic credentials): no property over the bytes. */
const SIGNS_NOTHING = new Set(['token', 'gitlab', 'postmark', 'none']);
/** SNS signs with its own certificate: the sns tests sign with a development key pair. */
const UNSIGNABLE = new Set(['sns']);

/** A body the scheme's sender could send, from random text: a notification for Adyen, a form for Twilio. */
function bodyFor(scheme: SenderScheme, text: string): Buffer {
  if (scheme.name === 'twilio')
    return Buffer.from(new URLSearchParams({ MessageSid: 'SM1', Body: text }).toString());
  if (scheme.name === 'adyen') {
    const item = {
      pspReference: 'P1',
      merchantAccountCode: 'M',
      merchantReference: text,
      eventCode: 'AUTHORISATION',
      success: 'true',
      amount: { value: 100, currency: 'EUR' },
    };
    return Buffer.from(
      JSON.stringify({ live: 'false', notificationItems: [{ NotificationRequestItem: item }] }),
    );
  }
  return Buffer.from(JSON.stringify({ type: 'note.created', title: text, webhookTimestamp: NOW.getTime() }));
}

/** What dedupes a verified delivery: its content key material, else the sender's delivery id. */
function dedupeKey(config: VerifyConfig, input: VerifyInput): string {
  const verified = verifyDelivery(input);
  if (verified.signedDigest !== undefined)
    return `signed:${Buffer.from(verified.signedDigest).toString('hex')}`;
  let body: unknown;
  try {
    body = JSON.parse(input.rawBody.toString('utf8'));
  } catch {
    body = undefined;
  }
  return `id:${String(senderDeliveryId(config, { headers: input.headers, body }))}`;
}

describe('every preset in the registry', () => {
  it('covers every scheme', () => {
    expect(cases.map(({ scheme }) => scheme.name)).toEqual(SENDERS.map(({ name }) => name));
  });

  it.each(cases.filter(({ scheme }) => scheme.takesSecret).map((c) => [c.scheme.name, c] as const))(
    '%s never accepts random requests, fails only with its own errors, and leaks nothing',
    (_name, { config, secrets }) => {
      fc.assert(
        fc.property(randomBody, randomHeaders, (rawBody, headers) => {
          const input = { config, secrets, rawBody, headers, now: NOW, url: HOOK_URL, method: 'POST' };
          const error = thrown(() => verifyDelivery(input));
          expect(error instanceof SignatureError || error instanceof VerifyConfigError).toBe(true);
          expectNoLeak(error, input, [], 16);
        }),
        { numRuns: 60, seed: SEED },
      );
    },
  );

  it.each(
    cases
      .filter(({ scheme }) => !UNSIGNABLE.has(scheme.name) && !SIGNS_NOTHING.has(scheme.name))
      .map((c) => [c.scheme.name, c] as const),
  )('%s verifies what it signs; a changed byte is refused or keeps the dedupe key', (_name, c) => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 200 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (text, at, xor) => {
          const sign = { config: c.config, secrets: c.secrets, now: NOW, url: HOOK_URL, newId: () => 'id-1' };
          const rawBody = signedBody({ ...sign, rawBody: bodyFor(c.scheme, text) });
          const headers = signDelivery({ ...sign, rawBody });
          const genuine: VerifyInput = { ...sign, rawBody, headers, method: 'POST' };
          const key = dedupeKey(c.config, genuine);
          const tampered = Buffer.from(rawBody);
          const index = at % tampered.length;
          tampered[index] = (tampered[index] ?? 0) ^ xor;
          const changed = { ...genuine, rawBody: tampered };
          const error = thrown(() => {
            const changedKey = dedupeKey(c.config, changed);
            if (SIGNS_PART.has(c.scheme.name) && changedKey === key)
              throw new SignatureError('SIGNATURE_INVALID', 'same key');
          });
          expect(error).toBeInstanceOf(SignatureError);
        },
      ),
      { numRuns: 40, seed: SEED },
    );
  });
});
