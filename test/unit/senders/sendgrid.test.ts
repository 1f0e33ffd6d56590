import { generateKeyPairSync, sign } from 'node:crypto';
import { EventWebhook } from '@sendgrid/eventwebhook';
import { signDelivery, verifyDelivery } from '../../../functions/senders';
import { expectConfigError, expectRefused, input } from './fixtures';

// SendGrid's own published test vector (@sendgrid/eventwebhook's spec): key, signature, timestamp, payload.
const PUBLIC_KEY =
  'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O/n84iotIvIW4mdBgQ/7dAfSmpqIM8kF9mN1flpVKS3GRqe62gw+2fNNRaINXvVpiglSI8eNEc6wEA3F+g==';
const SIGNATURE =
  'MEUCIGHQVtGj+Y3LkG9fLcxf3qfI10QysgDWmMOVmxG0u6ZUAiEAyBiXDWzM+uOe5W0JuG+luQAbPIqHh89M15TluLtEZtM=';
const TIMESTAMP = '1600112502';
const PAYLOAD = `${JSON.stringify([
  {
    email: 'hello@world.com',
    event: 'dropped',
    reason: 'Bounced Address',
    sg_event_id: 'ZHJvcC0xMDk5NDkxOS1MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA',
    sg_message_id: 'LRzXl_NHStOGhQ4kofSm_A.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC76C-9.0',
    'smtp-id': '<LRzXl_NHStOGhQ4kofSm_A@ismtpd0039p1iad1.sendgrid.net>',
    timestamp: 1600112492,
  },
])}\r\n`;
const AT = new Date(Number(TIMESTAMP) * 1000);

const headersOf = (signature: string, timestamp = TIMESTAMP) => ({
  'x-twilio-email-event-webhook-signature': signature,
  'x-twilio-email-event-webhook-timestamp': timestamp,
});
const sendgrid = (headers: Record<string, string>, fields: Parameters<typeof input>[1] = {}) =>
  input(
    { scheme: 'sendgrid', secret: 'docrelay/sendgrid' },
    { secrets: [PUBLIC_KEY], rawBody: Buffer.from(PAYLOAD), now: AT, headers, ...fields },
  );
const otherPair = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const spki = (key: ReturnType<typeof otherPair>['publicKey']) =>
  key.export({ format: 'der', type: 'spki' }).toString('base64');

describe('sendgrid scheme', () => {
  it("accepts SendGrid's published example (the library accepts it too)", () => {
    const library = new EventWebhook();
    const pem = `-----BEGIN PUBLIC KEY-----\n${PUBLIC_KEY}\n-----END PUBLIC KEY-----`;
    expect(library.verifySignature(library.convertPublicKeyToECDSA(pem), PAYLOAD, SIGNATURE, TIMESTAMP)).toBe(
      true,
    );
    expect(verifyDelivery(sendgrid(headersOf(SIGNATURE)))).toEqual({ scheme: 'sendgrid', timestamp: AT });
  });

  it('accepts the key as PEM, and a second key during a rotation', () => {
    const pem = `-----BEGIN PUBLIC KEY-----\n${PUBLIC_KEY}\n-----END PUBLIC KEY-----\n`;
    expect(
      verifyDelivery(sendgrid(headersOf(SIGNATURE), { secrets: [spki(otherPair().publicKey), pem] })).scheme,
    ).toBe('sendgrid');
  });

  it('signs with a private key so that the library and the verifier accept it', () => {
    const { privateKey, publicKey } = otherPair();
    const secret = privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64');
    const body = Buffer.from('[{"event":"delivered","sg_event_id":"e1"}]');
    const headers = signDelivery({
      config: { scheme: 'sendgrid' },
      secrets: [secret],
      rawBody: body,
      now: AT,
    });
    const library = new EventWebhook();
    const pem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
    expect(
      library.verifySignature(
        library.convertPublicKeyToECDSA(pem),
        body,
        headers['x-twilio-email-event-webhook-signature'] ?? '',
        headers['x-twilio-email-event-webhook-timestamp'] ?? '',
      ),
    ).toBe(true);
    expect(verifyDelivery(sendgrid(headers, { rawBody: body, secrets: [spki(publicKey)] })).scheme).toBe(
      'sendgrid',
    );
  });

  it('refuses another key, another body, a stale timestamp and a missing header', () => {
    expectRefused(
      sendgrid(headersOf(SIGNATURE), { secrets: [spki(otherPair().publicKey)] }),
      'SIGNATURE_INVALID',
    );
    expectRefused(
      sendgrid(headersOf(SIGNATURE), { rawBody: Buffer.from(PAYLOAD.trim()) }),
      'SIGNATURE_INVALID',
    );
    expectRefused(sendgrid(headersOf(SIGNATURE, '1600112503')), 'SIGNATURE_INVALID');
    expectRefused(
      sendgrid(headersOf(SIGNATURE), { now: new Date(AT.getTime() + 301_000) }),
      'TIMESTAMP_STALE',
    );
    expectRefused(sendgrid({ 'x-twilio-email-event-webhook-timestamp': TIMESTAMP }), 'SIGNATURE_MISSING');
    expectRefused(sendgrid({ 'x-twilio-email-event-webhook-signature': SIGNATURE }), 'SIGNATURE_MISSING');
    expectRefused(sendgrid(headersOf('not base64!')), 'SIGNATURE_MALFORMED');
  });

  it('refuses a secret that is no P-256 key, and will not sign with a public key', () => {
    expectConfigError(sendgrid(headersOf(SIGNATURE), { secrets: ['not-a-key'] }));
    const ed = generateKeyPairSync('ed25519')
      .publicKey.export({ format: 'der', type: 'spki' })
      .toString('base64');
    expectConfigError(sendgrid(headersOf(SIGNATURE), { secrets: [ed] }));
    expect(() =>
      signDelivery({
        config: { scheme: 'sendgrid' },
        secrets: [PUBLIC_KEY],
        rawBody: Buffer.from(PAYLOAD),
        now: AT,
      }),
    ).toThrow(/private key/);
    // A raw ECDSA (IEEE P1363) signature is not what SendGrid sends.
    const { privateKey, publicKey } = otherPair();
    const raw = sign('sha256', Buffer.from(`${TIMESTAMP}${PAYLOAD}`), {
      key: privateKey,
      dsaEncoding: 'ieee-p1363',
    });
    expectRefused(
      sendgrid(headersOf(raw.toString('base64')), { secrets: [spki(publicKey)] }),
      'SIGNATURE_INVALID',
    );
  });
});
