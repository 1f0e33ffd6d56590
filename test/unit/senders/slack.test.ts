import { createHmac } from 'node:crypto';
import { verifySlackRequest } from '@slack/bolt';
import fc from 'fast-check';
import { verifyDelivery } from '../../../functions/senders';
import { BODY, expectRefused, input, NOW, NOW_S, RESERIALISED, randomSecret, tamper } from './fixtures';

const secret = randomSecret();
const otherSecret = randomSecret();

// Slack publishes the algorithm, not a signer: the tests compute `v0=` per Slack's docs and use Bolt's own
// verifier to prove each test signature is one Slack's SDK accepts, so docrelay is not checked against itself.
const slackSign = (signingSecret: string, timestamp: number | string, body: Buffer): string =>
  `v0=${createHmac('sha256', signingSecret).update(`v0:${timestamp}:`).update(body).digest('hex')}`;

const boltAccepts = (signature: string, timestamp: number, body: Buffer, now = NOW): boolean => {
  try {
    verifySlackRequest({
      signingSecret: secret,
      body: body.toString('utf8'),
      headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': timestamp },
      nowMilliseconds: now.getTime(),
    });
    return true;
  } catch {
    return false;
  }
};

const slack = (
  headers: Record<string, string>,
  fields: { secrets?: string[]; rawBody?: Buffer; now?: Date } = {},
) => input({ scheme: 'slack', secret: 'docrelay/slack' }, { secrets: [secret], headers, ...fields });
const signed = (signature: string, timestamp: number | string = NOW_S) => ({
  'x-slack-signature': signature,
  'x-slack-request-timestamp': String(timestamp),
});

describe('slack scheme', () => {
  it('accepts a signature that Bolt verifySlackRequest accepts, returning the signed timestamp', () => {
    const signature = slackSign(secret, NOW_S, BODY);
    expect(boltAccepts(signature, NOW_S, BODY)).toBe(true);
    expect(verifyDelivery(slack(signed(signature)))).toEqual({
      scheme: 'slack',
      timestamp: new Date(NOW_S * 1000),
    });
  });

  it('accepts a form-encoded slash command body, as Slack sends them', () => {
    const body = Buffer.from('token=x&team_id=T0001&command=%2Fdoc&text=release+notes');
    const signature = slackSign(secret, NOW_S, body);
    expect(boltAccepts(signature, NOW_S, body)).toBe(true);
    expect(verifyDelivery(slack(signed(signature), { rawBody: body })).scheme).toBe('slack');
  });

  it('refuses another secret, a tampered body and a re-serialised body, as Bolt does', () => {
    const cases: [string, Buffer][] = [
      [slackSign(otherSecret, NOW_S, BODY), BODY],
      [slackSign(secret, NOW_S, BODY), tamper(BODY)],
      [slackSign(secret, NOW_S, BODY), RESERIALISED],
    ];
    for (const [signature, body] of cases) {
      expect(boltAccepts(signature, NOW_S, body)).toBe(false);
      expectRefused(slack(signed(signature), { rawBody: body }), 'SIGNATURE_INVALID', [
        slackSign(secret, NOW_S, body),
      ]);
    }
  });

  it('refuses a signature replayed with another timestamp (the timestamp is signed)', () => {
    expectRefused(slack(signed(slackSign(secret, NOW_S, BODY), NOW_S - 10)), 'SIGNATURE_INVALID');
  });

  it('accepts the second secret during a rotation', () => {
    const headers = signed(slackSign(otherSecret, NOW_S, BODY));
    expect(verifyDelivery(slack(headers, { secrets: [secret, otherSecret] })).scheme).toBe('slack');
  });

  it('refuses a stale timestamp, as Bolt does, and also a future one beyond the tolerance, which Bolt lets through', () => {
    const stale = NOW_S - 301;
    expect(boltAccepts(slackSign(secret, stale, BODY), stale, BODY)).toBe(false);
    expectRefused(slack(signed(slackSign(secret, stale, BODY), stale)), 'TIMESTAMP_STALE');

    const future = NOW_S + 301;
    expectRefused(slack(signed(slackSign(secret, future, BODY), future)), 'TIMESTAMP_STALE');
  });

  it('agrees with Bolt on random bodies, timestamps in the past and intact or damaged signatures', () => {
    fc.assert(
      fc.property(
        // Bolt takes the body as a string, so bodies are well-formed Unicode (as any JSON is).
        fc.string({ unit: 'grapheme', maxLength: 200 }).map((text) => Buffer.from(text)),
        fc.integer({ min: 0, max: 1200 }),
        fc.boolean(),
        fc.nat(),
        (body, age, damage, position) => {
          const timestamp = NOW_S - age;
          let signature = slackSign(secret, timestamp, body);
          if (damage) {
            const index = 3 + (position % 64);
            const flipped = signature[index] === '0' ? '1' : '0';
            signature = signature.slice(0, index) + flipped + signature.slice(index + 1);
          }
          let ours: boolean;
          try {
            verifyDelivery(slack(signed(signature, timestamp), { rawBody: body }));
            ours = true;
          } catch {
            ours = false;
          }
          expect(ours).toBe(boltAccepts(signature, timestamp, body));
        },
      ),
      { numRuns: 300, seed: 20261126 },
    );
  });

  it('refuses missing headers, naming the missing one', () => {
    expect(
      expectRefused(slack({ 'x-slack-request-timestamp': String(NOW_S) }), 'SIGNATURE_MISSING').detail,
    ).toBe('missing X-Slack-Signature header');
    expect(
      expectRefused(slack({ 'x-slack-signature': slackSign(secret, NOW_S, BODY) }), 'SIGNATURE_MISSING')
        .detail,
    ).toBe('missing X-Slack-Request-Timestamp header');
  });

  const good = slackSign(secret, NOW_S, BODY);
  it.each([
    ['a signature without v0=', signed(good.slice(3))],
    ['a v1= signature', signed(`v1=${good.slice(3)}`)],
    ['non-hex digits', signed(`v0=${'x'.repeat(64)}`)],
    ['a truncated signature', signed(good.slice(0, -2))],
    ['a non-numeric timestamp', signed(good, 'yesterday')],
    ['a timestamp in milliseconds with a decimal point', signed(good, `${NOW_S}.000`)],
    ['a negative timestamp', signed(good, `-${NOW_S}`)],
    ['a signature header over 8 KB', signed(`v0=${'0'.repeat(9000)}`)],
  ])('refuses malformed headers: %s', (_, headers) => {
    expectRefused(slack(headers), 'SIGNATURE_MALFORMED', [good]);
  });
});
