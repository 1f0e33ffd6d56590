import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { verifyDelivery } from '../../../functions/senders';
import { BODY, BODY_TEXT, expectRefused, input, NOW_S, RESERIALISED, randomSecret, tamper } from './fixtures';

// Only the offline test-header helper and the signature checker are used: no request leaves the process.
const stripe = new Stripe('sk_test_x');
const secret = randomSecret('whsec_');
const otherSecret = randomSecret('whsec_');

/** A Stripe-Signature header made by Stripe's own library. */
const stripeHeader = (payload: string, signingSecret = secret, timestamp = NOW_S): string =>
  stripe.webhooks.generateTestHeaderString({ payload, secret: signingSecret, timestamp });
/** The hex v1 value out of a Stripe-Signature header. */
const v1Of = (header: string): string => /v1=([0-9a-f]+)/.exec(header)?.[1] ?? '';

const delivery = (
  header: string | undefined,
  fields: { secrets?: string[]; rawBody?: Buffer; now?: Date } = {},
) =>
  input(
    { scheme: 'stripe', secret: 'docrelay/stripe' },
    { secrets: [secret], headers: header === undefined ? {} : { 'stripe-signature': header }, ...fields },
  );

describe('stripe scheme', () => {
  it('accepts a header from stripe.webhooks.generateTestHeaderString and returns its timestamp', () => {
    expect(verifyDelivery(delivery(stripeHeader(BODY_TEXT)))).toEqual({
      scheme: 'stripe',
      timestamp: new Date(NOW_S * 1000),
    });
  });

  it('refuses another secret, a tampered body and a re-serialised body', () => {
    expectRefused(delivery(stripeHeader(BODY_TEXT, otherSecret)), 'SIGNATURE_INVALID', [otherSecret]);
    expectRefused(delivery(stripeHeader(BODY_TEXT), { rawBody: tamper(BODY) }), 'SIGNATURE_INVALID');
    const error = expectRefused(
      delivery(stripeHeader(BODY_TEXT), { rawBody: RESERIALISED }),
      'SIGNATURE_INVALID',
      [v1Of(stripeHeader(RESERIALISED.toString('utf8')))],
    );
    expect(error.detail).toBe('no Stripe-Signature v1 signature matches the body');
  });

  it('refuses a signature whose t was changed (the timestamp is signed)', () => {
    const header = stripeHeader(BODY_TEXT).replace(`t=${NOW_S}`, `t=${NOW_S + 1}`);
    expectRefused(delivery(header), 'SIGNATURE_INVALID');
  });

  it('accepts when one of several v1 values matches, ignoring v0 and unknown schemes', () => {
    const good = v1Of(stripeHeader(BODY_TEXT));
    const bad = v1Of(stripeHeader(BODY_TEXT, otherSecret));
    const header = `t=${NOW_S},v1=${bad},v0=${'ab'.repeat(32)},v1=${good},v9=whatever`;
    expect(verifyDelivery(delivery(header)).scheme).toBe('stripe');
  });

  it('accepts the second secret during a rotation (Stripe signs with both while a secret is rolled)', () => {
    const header = stripeHeader(BODY_TEXT, otherSecret);
    expect(verifyDelivery(delivery(header, { secrets: [secret, otherSecret] })).scheme).toBe('stripe');
  });

  it('accepts a timestamp exactly at the 300 s tolerance, both ways', () => {
    expect(verifyDelivery(delivery(stripeHeader(BODY_TEXT, secret, NOW_S - 300))).scheme).toBe('stripe');
    expect(verifyDelivery(delivery(stripeHeader(BODY_TEXT, secret, NOW_S + 300))).scheme).toBe('stripe');
  });

  it('refuses a stale and a future timestamp beyond the tolerance', () => {
    const stale = expectRefused(delivery(stripeHeader(BODY_TEXT, secret, NOW_S - 301)), 'TIMESTAMP_STALE');
    expect(stale.detail).toBe('timestamp outside the 300 s tolerance');
    expectRefused(delivery(stripeHeader(BODY_TEXT, secret, NOW_S + 301)), 'TIMESTAMP_STALE');
  });

  it('honours a configured toleranceSeconds', () => {
    const header = stripeHeader(BODY_TEXT, secret, NOW_S - 1000);
    const config = { scheme: 'stripe' as const, toleranceSeconds: 1200 };
    expect(
      verifyDelivery(input(config, { secrets: [secret], headers: { 'stripe-signature': header } })).scheme,
    ).toBe('stripe');
    const strict = { scheme: 'stripe' as const, toleranceSeconds: 60 };
    const error = expectRefused(
      input(strict, { secrets: [secret], headers: { 'stripe-signature': header } }),
      'TIMESTAMP_STALE',
    );
    expect(error.detail).toBe('timestamp outside the 60 s tolerance');
  });

  it('agrees with stripe.webhooks.signature.verifyHeader on signatures and staleness', () => {
    const cases: [string, Buffer, number][] = [
      [stripeHeader(BODY_TEXT), BODY, NOW_S],
      [stripeHeader(BODY_TEXT), tamper(BODY), NOW_S],
      [stripeHeader(BODY_TEXT), RESERIALISED, NOW_S],
      [stripeHeader(BODY_TEXT, otherSecret), BODY, NOW_S],
      [stripeHeader(BODY_TEXT, secret, NOW_S - 301), BODY, NOW_S],
      [stripeHeader(BODY_TEXT, secret, NOW_S - 299), BODY, NOW_S],
    ];
    for (const [header, body, t] of cases) {
      let theirs: boolean;
      try {
        theirs =
          stripe.webhooks.signature?.verifyHeader(body, header, secret, 300, undefined, t * 1000) === true;
      } catch {
        theirs = false;
      }
      let ours: boolean;
      try {
        verifyDelivery(delivery(header, { rawBody: body, now: new Date(t * 1000) }));
        ours = true;
      } catch {
        ours = false;
      }
      expect({ header, ours }).toEqual({ header, ours: theirs });
    }
  });

  it('refuses a missing header', () => {
    expect(expectRefused(delivery(undefined), 'SIGNATURE_MISSING').detail).toBe(
      'missing Stripe-Signature header',
    );
  });

  const v1 = createHmac('sha256', secret).update(`${NOW_S}.`).update(BODY).digest('hex');
  it.each([
    ['no timestamp', `v1=${v1}`],
    ['no v1 signature', `t=${NOW_S},v0=${v1}`],
    ['a non-numeric timestamp', `t=now,v1=${v1}`],
    ['a negative timestamp', `t=-${NOW_S},v1=${v1}`],
    ['a fractional timestamp', `t=${NOW_S}.5,v1=${v1}`],
    ['an absurdly long timestamp', `t=${'9'.repeat(40)},v1=${v1}`],
    ['two timestamps (a repeated header joined by a proxy)', `t=${NOW_S},v1=${v1}, t=${NOW_S - 5},v1=${v1}`],
    ['only garbage', 'garbage'],
    [
      'too many signatures',
      `t=${NOW_S},${Array.from({ length: 40 }, () => `v1=${'00'.repeat(32)}`).join(',')}`,
    ],
    ['a value over 8 KB', `t=${NOW_S},v1=${'a'.repeat(9000)}`],
  ])('refuses a malformed header: %s', (_, header) => {
    expectRefused(delivery(header), 'SIGNATURE_MALFORMED', [v1]);
  });

  it.each([
    ['non-hex v1', `t=${NOW_S},v1=${'g'.repeat(64)}`],
    ['short v1', `t=${NOW_S},v1=${v1.slice(0, 62)}`],
    ['empty v1', `t=${NOW_S},v1=`],
  ])('refuses a v1 value that cannot match: %s', (_, header) => {
    expectRefused(delivery(header), 'SIGNATURE_INVALID', [v1]);
  });
});
