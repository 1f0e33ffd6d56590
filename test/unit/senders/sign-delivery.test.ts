/**
 * What `docrelay send` signs (signDelivery) passes docrelay's own verification, for every scheme, and fails it once the body
 * or the secret differ: the signer is the verifier's mirror image.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import {
  SENDERS,
  SignatureError,
  SigningError,
  signDelivery,
  type VerifyConfig,
  verifyDelivery,
} from '../../../functions/senders';

const TEST_URL = 'https://hooks.example.test/v1/hooks/orders';
const NOW = new Date('2026-03-01T12:00:00.000Z');
const BODY = Buffer.from('{"action":"published","release":{"name":"v1.2.0","tag_name":"v1.2.0"}}');
const hexSecret = (): string => `dev_${randomBytes(24).toString('hex')}`;
const whsec = (): string => `whsec_${randomBytes(24).toString('base64')}`;

const cases: ReadonlyArray<{ name: string; config: VerifyConfig; secret: () => string }> = [
  { name: 'github', config: { scheme: 'github', secret: 's' }, secret: hexSecret },
  { name: 'stripe', config: { scheme: 'stripe', secret: 's' }, secret: () => whsec() },
  { name: 'shopify', config: { scheme: 'shopify', secret: 's' }, secret: hexSecret },
  { name: 'slack', config: { scheme: 'slack', secret: 's' }, secret: hexSecret },
  { name: 'standard-webhooks', config: { scheme: 'standard-webhooks', secret: 's' }, secret: whsec },
  {
    name: 'standard-webhooks with a bare base64 secret',
    config: { scheme: 'standard-webhooks', secret: 's' },
    secret: () => randomBytes(32).toString('base64'),
  },
  {
    name: 'hmac-sha256 hex without prefix',
    config: { scheme: 'hmac-sha256', secret: 's', header: 'X-Signature' },
    secret: hexSecret,
  },
  {
    name: 'hmac-sha256 base64 with prefix',
    config: {
      scheme: 'hmac-sha256',
      secret: 's',
      header: 'X-Hub-Sig',
      encoding: 'base64',
      prefix: 'sha256=',
    },
    secret: hexSecret,
  },
  { name: 'token (Authorization: Bearer)', config: { scheme: 'token', secret: 's' }, secret: hexSecret },
  {
    name: 'token in a custom header',
    config: { scheme: 'token', secret: 's', header: 'X-Webhook-Token' },
    secret: hexSecret,
  },
];

describe('signDelivery', () => {
  it.each(cases)('signs $name so that verifyDelivery accepts it', ({ config, secret }) => {
    const value = secret();
    const headers = signDelivery({
      config,
      secrets: [value],
      rawBody: BODY,
      now: NOW,
      url: TEST_URL,
      method: 'POST',
    });
    const verified = verifyDelivery({
      rawBody: BODY,
      headers,
      config,
      secrets: [value],
      now: NOW,
      url: TEST_URL,
      method: 'POST',
    });
    expect(verified.scheme).toBe(config.scheme);
    // Header names as the ingest sees them: lower-case.
    for (const name of Object.keys(headers)) expect(name).toBe(name.toLowerCase());
  });

  it.each(cases.filter(({ config }) => config.scheme !== 'token'))(
    'signs $name over the exact bytes: another body is refused',
    ({ config, secret }) => {
      const value = secret();
      const headers = signDelivery({
        config,
        secrets: [value],
        rawBody: BODY,
        now: NOW,
        url: TEST_URL,
        method: 'POST',
      });
      const other = Buffer.from(JSON.stringify(JSON.parse(BODY.toString()), null, 2));
      expect(() =>
        verifyDelivery({
          rawBody: other,
          headers,
          config,
          secrets: [value],
          now: NOW,
          url: TEST_URL,
          method: 'POST',
        }),
      ).toThrow(SignatureError);
    },
  );

  it.each(cases)('signs $name with the secret given: another secret is refused', ({ config, secret }) => {
    const headers = signDelivery({
      config,
      secrets: [secret()],
      rawBody: BODY,
      now: NOW,
      url: TEST_URL,
      method: 'POST',
    });
    expect(() =>
      verifyDelivery({
        rawBody: BODY,
        headers,
        config,
        secrets: [secret()],
        now: NOW,
        url: TEST_URL,
        method: 'POST',
      }),
    ).toThrow(SignatureError);
  });

  it('signs with the first secret of a rotation list', () => {
    const [current, previous] = [hexSecret(), hexSecret()];
    const config: VerifyConfig = { scheme: 'github', secret: ['a', 'b'] };
    const headers = signDelivery({
      config,
      secrets: [current, previous],
      rawBody: BODY,
      now: NOW,
      url: TEST_URL,
      method: 'POST',
    });
    expect(() =>
      verifyDelivery({
        rawBody: BODY,
        headers,
        config,
        secrets: [current],
        now: NOW,
        url: TEST_URL,
        method: 'POST',
      }),
    ).not.toThrow();
  });

  it('makes a Standard Webhooks signature the standardwebhooks package verifies', () => {
    const secret = whsec();
    const headers = signDelivery({
      config: { scheme: 'standard-webhooks', secret: 's' },
      secrets: [secret],
      rawBody: BODY,
      now: new Date(),
    });
    expect(new Webhook(secret).verify(BODY.toString(), headers)).toEqual(JSON.parse(BODY.toString()));
    expect(headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
  });

  it('timestamps stripe, slack and standard-webhooks with the signing time', () => {
    const seconds = String(Math.floor(NOW.getTime() / 1000));
    const sign = (config: VerifyConfig, secret: string) =>
      signDelivery({ config, secrets: [secret], rawBody: BODY, now: NOW, url: TEST_URL, method: 'POST' });
    expect(sign({ scheme: 'stripe' }, hexSecret())['stripe-signature']).toMatch(
      new RegExp(`^t=${seconds},v1=[0-9a-f]{64}$`),
    );
    expect(sign({ scheme: 'slack' }, hexSecret())['x-slack-request-timestamp']).toBe(seconds);
    expect(sign({ scheme: 'standard-webhooks' }, whsec())['webhook-timestamp']).toBe(seconds);
  });

  it('puts the given delivery id in the header of each scheme that carries one', () => {
    for (const { name: scheme, deliveryId } of SENDERS) {
      if (deliveryId === undefined || !('header' in deliveryId)) continue;
      const { header } = deliveryId;
      const config = { scheme } as VerifyConfig;
      const secret = scheme === 'standard-webhooks' ? whsec() : hexSecret();
      const headers = signDelivery({
        config,
        secrets: [secret],
        rawBody: BODY,
        now: NOW,
        deliveryId: 'd-42',
      });
      expect(headers[header]).toBe('d-42');
      const verified = verifyDelivery({
        rawBody: BODY,
        headers,
        config,
        secrets: [secret],
        now: NOW,
        url: TEST_URL,
        method: 'POST',
      });
      expect(verified.deliveryId).toBe('d-42');
    }
  });

  it('adds the GitHub event name guessed from the payload and a new delivery id each time', () => {
    const config: VerifyConfig = { scheme: 'github' };
    const secret = hexSecret();
    const first = signDelivery({
      config,
      secrets: [secret],
      rawBody: BODY,
      now: NOW,
      url: TEST_URL,
      method: 'POST',
    });
    const second = signDelivery({
      config,
      secrets: [secret],
      rawBody: BODY,
      now: NOW,
      url: TEST_URL,
      method: 'POST',
    });
    expect(first['x-github-event']).toBe('release');
    expect(first['x-github-delivery']).toMatch(/^[0-9a-f-]{36}$/);
    expect(second['x-github-delivery']).not.toBe(first['x-github-delivery']);
    const push = Buffer.from('{"ref":"refs/heads/main","commits":[]}');
    expect(
      signDelivery({ config, secrets: [secret], rawBody: push, now: NOW, url: TEST_URL, method: 'POST' })[
        'x-github-event'
      ],
    ).toBe('push');
  });

  it('sends nothing for scheme none', () => {
    expect(
      signDelivery({
        config: { scheme: 'none', allowUnsigned: true },
        secrets: [],
        rawBody: BODY,
        now: NOW,
        url: TEST_URL,
        method: 'POST',
      }),
    ).toEqual({});
  });

  it('refuses to sign ed25519 (v1a) Standard Webhooks, naming no key', () => {
    const publicKey = `whpk_${randomBytes(32).toString('base64')}`;
    let error: unknown;
    try {
      signDelivery({
        config: { scheme: 'standard-webhooks' },
        secrets: [publicKey],
        rawBody: BODY,
        now: NOW,
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(SigningError);
    expect((error as Error).message).toMatch(/v1a.*private key/);
    expect((error as Error).message).not.toContain(publicKey.slice(5, 20));
  });

  it('refuses a signing scheme without a secret, and a Standard Webhooks secret that is not base64', () => {
    expect(() =>
      signDelivery({
        config: { scheme: 'github' },
        secrets: [],
        rawBody: BODY,
        now: NOW,
        url: TEST_URL,
        method: 'POST',
      }),
    ).toThrow(/needs a secret/);
    expect(() =>
      signDelivery({
        config: { scheme: 'standard-webhooks' },
        secrets: ['whsec_not base64!'],
        rawBody: BODY,
        now: NOW,
      }),
    ).toThrow(/not a whsec_ base64 secret/);
  });
});
