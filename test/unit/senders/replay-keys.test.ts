/**
 * What the signature does not cover (issue 39): the content key of deliveries whose id is unsigned or whose
 * sender signs parsed content, the generic hmac's unsigned timestamp refused at load, Twilio's URL
 * fallbacks, Adyen's signed fields, GitLab's signing token and Shopify's webhook id.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { hmacValidator as HmacValidator } from '@adyen/api-library';
import { Webhook } from 'standardwebhooks';
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks';
import { ConfigError } from '../../../functions/config/errors';
import { parseConfig } from '../../../functions/config/load';
import { contentKey } from '../../../functions/core/delivery-id';
import { signDelivery, type VerifyConfig, verifyDelivery } from '../../../functions/senders';
import { expectRefused, input, NOW, NOW_S, randomSecret, thrown } from './fixtures';

const yaml = (verify: string) => `service: { baseUrl: https://docs.example.com }
integrations:
  - id: acme
    verify: ${verify}
    documents:
      - { name: note, template: { id: "9003" }, data: { Title: "'x'" } }
`;

describe('generic hmac: what the signature covers decides what dedupes', () => {
  it('refuses at load a timestampHeader that signedContent does not include, naming the option and line', () => {
    const error = thrown(() =>
      parseConfig(yaml('{ scheme: hmac, secret: s, header: X-Sig, timestampHeader: X-Ts }'), 'acme.yaml'),
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      expect.objectContaining({
        path: 'integrations[0].verify.timestampHeader',
        message: expect.stringMatching(/^signedContent does not include \{timestamp\}/),
        line: 4,
      }),
    ]);
    expect(() =>
      parseConfig(
        yaml(
          '{ scheme: hmac, secret: s, header: X-Sig, timestampHeader: X-Ts, signedContent: "{timestamp}.{body}" }',
        ),
      ),
    ).not.toThrow();
  });

  it('refuses placeholders without their header, and unknown ones', () => {
    const problems = (verify: string) => (thrown(() => parseConfig(yaml(verify))) as ConfigError).problems;
    expect(problems('{ scheme: hmac, secret: s, header: X-Sig, signedContent: "{id}.{body}" }')).toEqual([
      expect.objectContaining({
        path: 'integrations[0].verify.signedContent',
        message: 'uses {id} but no idHeader is set',
      }),
    ]);
    expect(problems('{ scheme: hmac, secret: s, header: X-Sig, signedContent: "{nonce}{body}" }')).toEqual([
      expect.objectContaining({ message: 'unknown placeholder {nonce}' }),
    ]);
  });

  it('refuses at verify time too (a config built without the loader)', () => {
    const config: VerifyConfig = { scheme: 'hmac', secret: 's', header: 'x-sig', timestampHeader: 'x-ts' };
    expect(thrown(() => verifyDelivery(input(config, { secrets: ['k'] })))).toMatchObject({
      name: 'VerifyConfigError',
    });
  });

  const secret = randomSecret();
  const body = Buffer.from('{"order":"A-1"}');
  const integration = (verify: string) => {
    const loaded = parseConfig(yaml(verify)).integrations.get('acme');
    if (loaded === undefined) throw new Error('no integration');
    return loaded;
  };
  const verifyWith = (verify: VerifyConfig, headers: Record<string, string>) =>
    verifyDelivery(input(verify, { rawBody: body, headers, secrets: [secret] }));

  it('keys content by the verified HMAC when the id header is outside signedContent', () => {
    const acme = integration('{ scheme: hmac, secret: s, header: X-Sig, idHeader: X-Id }');
    const verify = acme.config.verify as VerifyConfig;
    const mac = createHmac('sha256', secret).update(body).digest('hex');
    const first = verifyWith(verify, { 'x-sig': mac, 'x-id': 'd-1' });
    const replay = verifyWith(verify, { 'x-sig': mac, 'x-id': 'attacker' });
    expect(first.deliveryId).toBe('d-1');
    const key = contentKey(acme, body, first);
    expect(key).toMatch(/^hmac:[0-9a-f]{64}$/);
    expect(contentKey(acme, body, replay)).toBe(key);
    expect(key).not.toContain(mac);
  });

  it('claims no content key when signedContent covers the id (a new id breaks the signature)', () => {
    const acme = integration(
      '{ scheme: hmac, secret: s, header: X-Sig, idHeader: X-Id, signedContent: "{id}.{body}" }',
    );
    const verify = acme.config.verify as VerifyConfig;
    const mac = createHmac('sha256', secret).update(`d-1.${body.toString()}`).digest('hex');
    const verified = verifyWith(verify, { 'x-sig': mac, 'x-id': 'd-1' });
    expect(contentKey(acme, body, verified)).toBeUndefined();
    expectRefused(
      input(verify, { rawBody: body, headers: { 'x-sig': mac, 'x-id': 'd-2' }, secrets: [secret] }),
      'SIGNATURE_INVALID',
    );
  });
});

describe('twilio: the signed parameters, not the bytes', () => {
  const token = randomSecret().slice(0, 32);
  const url = 'https://hooks.example.com/v1/hooks/sms?tenant=acme';
  const form = 'MessageSid=SM1&Body=hello+world&From=%2B15005550006';
  const params = Object.fromEntries(new URLSearchParams(form));
  const twilio = (rawBody: string, headers: Record<string, string>, at = url) =>
    verifyDelivery(
      input(
        { scheme: 'twilio', secret: 't' },
        { rawBody: Buffer.from(rawBody), url: at, headers, secrets: [token] },
      ),
    );

  it('gives re-ordered and re-encoded parameters (%20 for +) the same signed digest', () => {
    const signature = getExpectedTwilioSignature(token, url, params);
    const first = twilio(form, { 'x-twilio-signature': signature });
    const reordered = twilio('From=%2B15005550006&Body=hello%20world&MessageSid=SM1', {
      'x-twilio-signature': signature,
    });
    expect(first.signedDigest).toBeDefined();
    expect(Buffer.from(reordered.signedDigest ?? [])).toEqual(Buffer.from(first.signedDigest ?? []));
    const other = twilio('MessageSid=SM2&Body=hello+world&From=%2B15005550006', {
      'x-twilio-signature': getExpectedTwilioSignature(token, url, { ...params, MessageSid: 'SM2' }),
    });
    expect(Buffer.from(other.signedDigest ?? [])).not.toEqual(Buffer.from(first.signedDigest ?? []));
  });

  it("accepts twilio-node's fallback: the URL as new URL() normalises it, and its legacy query", () => {
    const received = "https://hooks.example.com/v1/hooks/sms?name=O'Brien&x=a b";
    const normalised = new URL(received).toString();
    expect(normalised).not.toBe(received);
    const signature = getExpectedTwilioSignature(token, normalised, params);
    expect(twilio(form, { 'x-twilio-signature': signature }, received).scheme).toBe('twilio');
    const legacy = 'https://hooks.example.com/v1/hooks/sms?name=O%27Brien&x=a%20b';
    expect(
      twilio(form, { 'x-twilio-signature': getExpectedTwilioSignature(token, legacy, params) }, received)
        .scheme,
    ).toBe('twilio');
    expectRefused(
      input(
        { scheme: 'twilio', secret: 't' },
        {
          rawBody: Buffer.from(form),
          url: received,
          secrets: [token],
          headers: {
            'x-twilio-signature': getExpectedTwilioSignature(
              token,
              'https://hooks.example.com/v1/hooks/other',
              params,
            ),
          },
        },
      ),
      'SIGNATURE_INVALID',
    );
  });
});

describe('adyen: the eight signed fields', () => {
  const key = randomBytes(32).toString('hex').toUpperCase();
  const item = {
    amount: { currency: 'EUR', value: 1130 },
    eventCode: 'AUTHORISATION',
    eventDate: '2026-03-01T12:00:00+01:00',
    merchantAccountCode: 'DocrelayECOM',
    merchantReference: 'order-1042',
    pspReference: 'QFQTPCQ8HXSKGK82',
    success: 'true',
  };
  const notification = (changes: Record<string, unknown>, space?: number) => {
    const hmacSignature = new HmacValidator().calculateHmac(item as never, key);
    const signed = { ...item, additionalData: { hmacSignature }, ...changes };
    return Buffer.from(
      JSON.stringify(
        { live: 'false', notificationItems: [{ NotificationRequestItem: signed }] },
        null,
        space,
      ),
    );
  };
  const digest = (rawBody: Buffer) =>
    Buffer.from(
      verifyDelivery(input({ scheme: 'adyen', secret: 'a' }, { rawBody, secrets: [key] })).signedDigest ?? [],
    );

  it('gives the same digest re-serialised or with unsigned fields changed, and refuses a signed field changed', () => {
    const first = digest(notification({}));
    expect(first).toHaveLength(32);
    expect(digest(notification({}, 2))).toEqual(first);
    expect(digest(notification({ eventDate: '2001-01-01T00:00:00Z', paymentMethod: 'mc' }))).toEqual(first);
    expectRefused(
      input(
        { scheme: 'adyen', secret: 'a' },
        { rawBody: notification({ success: 'false' }), secrets: [key] },
      ),
      'SIGNATURE_INVALID',
    );
  });
});

describe('gitlab: the signing token and Idempotency-Key', () => {
  const signing = `whsec_${randomBytes(32).toString('base64')}`;
  const token = randomSecret();
  const body = Buffer.from('{"object_kind":"push"}');
  const signed = (id = 'idem-1', at = NOW) => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(signing).sign(id, at, body.toString()),
    'idempotency-key': id,
  });
  const gitlab = (secrets: string[], headers: Record<string, string>, rawBody = body) =>
    input({ scheme: 'gitlab', secret: 'g', toleranceSeconds: 300 }, { rawBody, headers, secrets });

  it("accepts a delivery signed as GitLab's signing token signs it, its Idempotency-Key the delivery id", () => {
    expect(verifyDelivery(gitlab([signing], signed()))).toEqual({
      scheme: 'gitlab',
      deliveryId: 'idem-1',
      timestamp: new Date(NOW_S * 1000),
    });
    expect(verifyDelivery(gitlab([token, signing], signed())).scheme).toBe('gitlab');
  });

  it('refuses a tampered body, a stale timestamp and, with signing tokens only, a plain token', () => {
    expectRefused(
      gitlab([signing], signed(), Buffer.from('{"object_kind":"tag_push"}')),
      'SIGNATURE_INVALID',
    );
    expectRefused(gitlab([signing], signed('idem-1', new Date(NOW.getTime() - 600_000))), 'TIMESTAMP_STALE');
    expect(() => verifyDelivery(gitlab([signing], { 'x-gitlab-token': signing }))).toThrow();
    // During a move to signing, a plain token still verifies when the request carries no signature.
    expect(verifyDelivery(gitlab([token, signing], { 'x-gitlab-token': token })).scheme).toBe('gitlab');
  });

  it('signs with the signing token as it verifies (docrelay send)', () => {
    const config: VerifyConfig = { scheme: 'gitlab', secret: 'g', toleranceSeconds: 300 };
    const headers = signDelivery({ config, secrets: [signing], rawBody: body, now: NOW, deliveryId: 'd-7' });
    expect(headers).toMatchObject({ 'webhook-id': 'd-7', 'idempotency-key': 'd-7' });
    expect(headers).not.toHaveProperty('x-gitlab-token');
    expect(verifyDelivery(gitlab([signing], headers)).deliveryId).toBe('d-7');
  });
});
