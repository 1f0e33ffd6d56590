import {
  createHmac,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign as signEd25519,
} from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { verifyDelivery } from '../../../functions/senders';
import {
  BODY,
  BODY_TEXT,
  expectConfigError,
  expectRefused,
  input,
  NOW,
  NOW_S,
  RESERIALISED,
  tamper,
} from './fixtures';

const newSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;
const secret = newSecret();
const otherSecret = newSecret();
const MSG_ID = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';

/** A v1 signature list entry made by the `standardwebhooks` package. */
const packageSign = (signingSecret: string, body: string | Buffer, id = MSG_ID, at = NOW): string =>
  new Webhook(signingSecret).sign(id, at, body);

/** An ed25519 key pair with its `whpk_` public key, as the spec encodes it (base64 of the raw 32 bytes). */
const newKeyPair = (): { privateKey: KeyObject; whpk: string } => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x ?? '';
  return { privateKey, whpk: `whpk_${Buffer.from(x, 'base64url').toString('base64')}` };
};
const v1aSign = (privateKey: KeyObject, body: Buffer, id = MSG_ID, timestamp = NOW_S): string =>
  `v1a,${signEd25519(null, Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]), privateKey).toString('base64')}`;

const headersFor = (signature: string, id = MSG_ID, timestamp: number | string = NOW_S) => ({
  'webhook-id': id,
  'webhook-timestamp': String(timestamp),
  'webhook-signature': signature,
});
const delivery = (
  headers: Record<string, string>,
  fields: { secrets?: string[]; rawBody?: Buffer; now?: Date } = {},
) => input({ scheme: 'standard-webhooks', secret: 'docrelay/sw' }, { secrets: [secret], headers, ...fields });

describe('standard-webhooks scheme', () => {
  it('accepts a v1 signature from the standardwebhooks package, returning webhook-id and the timestamp', () => {
    expect(verifyDelivery(delivery(headersFor(packageSign(secret, BODY_TEXT))))).toEqual({
      scheme: 'standard-webhooks',
      deliveryId: MSG_ID,
      timestamp: new Date(NOW_S * 1000),
    });
  });

  it('accepts a secret given without the whsec_ prefix, as the package does', () => {
    const bare = secret.slice('whsec_'.length);
    expect(
      verifyDelivery(delivery(headersFor(packageSign(secret, BODY_TEXT)), { secrets: [bare] })).scheme,
    ).toBe('standard-webhooks');
  });

  it('agrees with the package verify on a fresh delivery, both ways', () => {
    const now = new Date();
    const headers = headersFor(
      packageSign(secret, BODY_TEXT, MSG_ID, now),
      MSG_ID,
      Math.floor(now.getTime() / 1000),
    );
    expect(new Webhook(secret).verify(BODY_TEXT, headers)).toEqual(JSON.parse(BODY_TEXT));
    expect(verifyDelivery(delivery(headers, { now })).deliveryId).toBe(MSG_ID);
    expect(() => new Webhook(secret).verify(tamper(BODY).toString('utf8'), headers)).toThrow();
    expectRefused(delivery(headers, { now, rawBody: tamper(BODY) }), 'SIGNATURE_INVALID');
  });

  it('refuses another secret, a tampered body, a re-serialised body and a changed webhook-id', () => {
    expectRefused(delivery(headersFor(packageSign(otherSecret, BODY_TEXT))), 'SIGNATURE_INVALID', [
      otherSecret,
    ]);
    const signature = packageSign(secret, BODY_TEXT);
    expectRefused(delivery(headersFor(signature), { rawBody: tamper(BODY, 1) }), 'SIGNATURE_INVALID');
    expectRefused(delivery(headersFor(signature), { rawBody: RESERIALISED }), 'SIGNATURE_INVALID', [
      packageSign(secret, RESERIALISED),
    ]);
    // The id is signed, so a replay cannot dodge deduplication by changing it.
    expectRefused(delivery(headersFor(signature, 'msg_other')), 'SIGNATURE_INVALID');
  });

  it('accepts when one entry of a space-separated list matches, skipping unknown versions', () => {
    const list = [
      packageSign(otherSecret, BODY_TEXT),
      'v2,abc',
      packageSign(secret, BODY_TEXT),
      'v1,notbase64!',
    ].join(' ');
    expect(verifyDelivery(delivery(headersFor(list))).scheme).toBe('standard-webhooks');
  });

  it('accepts the second secret during a rotation', () => {
    const headers = headersFor(packageSign(otherSecret, BODY_TEXT));
    expect(verifyDelivery(delivery(headers, { secrets: [secret, otherSecret] })).scheme).toBe(
      'standard-webhooks',
    );
  });

  describe('v1a ed25519 with whpk_ public keys', () => {
    const sender = newKeyPair();
    const other = newKeyPair();

    it('accepts a v1a signature made with the matching private key', () => {
      const result = verifyDelivery(
        delivery(headersFor(v1aSign(sender.privateKey, BODY)), { secrets: [sender.whpk] }),
      );
      expect(result).toEqual({
        scheme: 'standard-webhooks',
        deliveryId: MSG_ID,
        timestamp: new Date(NOW_S * 1000),
      });
    });

    it('refuses another key pair, a tampered body and a changed timestamp', () => {
      const whpk = { secrets: [sender.whpk] };
      expectRefused(delivery(headersFor(v1aSign(other.privateKey, BODY)), whpk), 'SIGNATURE_INVALID');
      expectRefused(
        delivery(headersFor(v1aSign(sender.privateKey, BODY)), { ...whpk, rawBody: tamper(BODY) }),
        'SIGNATURE_INVALID',
      );
      expectRefused(
        delivery(headersFor(v1aSign(sender.privateKey, BODY), MSG_ID, NOW_S - 1), whpk),
        'SIGNATURE_INVALID',
      );
    });

    it('accepts a mixed v1/v1a list with mixed secrets, whichever matches', () => {
      const mixed = `${packageSign(otherSecret, BODY_TEXT)} ${v1aSign(sender.privateKey, BODY)}`;
      expect(verifyDelivery(delivery(headersFor(mixed), { secrets: [secret, sender.whpk] })).scheme).toBe(
        'standard-webhooks',
      );
      const mixedV1 = `${v1aSign(other.privateKey, BODY)} ${packageSign(secret, BODY_TEXT)}`;
      expect(verifyDelivery(delivery(headersFor(mixedV1), { secrets: [sender.whpk, secret] })).scheme).toBe(
        'standard-webhooks',
      );
    });

    it('does not accept a v1a signature checked against a whsec_ secret, nor a v1 against a whpk_ key', () => {
      expectRefused(
        delivery(headersFor(v1aSign(sender.privateKey, BODY)), { secrets: [secret] }),
        'SIGNATURE_INVALID',
      );
      expectRefused(
        delivery(headersFor(packageSign(secret, BODY_TEXT)), { secrets: [sender.whpk] }),
        'SIGNATURE_INVALID',
      );
    });

    it('refuses misconfigured keys without echoing them', () => {
      expectConfigError(
        delivery(headersFor(v1aSign(sender.privateKey, BODY)), { secrets: ['whpk_tooshort'] }),
      );
      expectConfigError(
        delivery(headersFor(v1aSign(sender.privateKey, BODY)), {
          secrets: [`whpk_${randomBytes(33).toString('base64')}`],
        }),
      );
      const whsk = `whsk_${randomBytes(32).toString('base64')}`;
      expect(expectConfigError(delivery(headersFor('v1a,AAAA'), { secrets: [whsk] })).message).toMatch(
        /whpk_/,
      );
      expectConfigError(delivery(headersFor(packageSign(secret, BODY_TEXT)), { secrets: ['whsec_%%%'] }));
    });
  });

  it('accepts timestamps at the tolerance edge and refuses stale and future ones', () => {
    const at = (seconds: number) =>
      headersFor(packageSign(secret, BODY_TEXT, MSG_ID, new Date(seconds * 1000)), MSG_ID, seconds);
    expect(verifyDelivery(delivery(at(NOW_S - 300))).scheme).toBe('standard-webhooks');
    expect(verifyDelivery(delivery(at(NOW_S + 300))).scheme).toBe('standard-webhooks');
    expectRefused(delivery(at(NOW_S - 301)), 'TIMESTAMP_STALE');
    expectRefused(delivery(at(NOW_S + 301)), 'TIMESTAMP_STALE');
    expect(
      verifyDelivery(
        input(
          { scheme: 'standard-webhooks', toleranceSeconds: 3600 },
          { secrets: [secret], headers: at(NOW_S - 3000) },
        ),
      ).scheme,
    ).toBe('standard-webhooks');
  });

  it.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'])(
    'refuses a delivery without %s',
    (name) => {
      const headers: Record<string, string> = headersFor(packageSign(secret, BODY_TEXT));
      delete headers[name];
      expect(expectRefused(delivery(headers), 'SIGNATURE_MISSING').detail).toBe(`missing ${name} header`);
    },
  );

  const good = packageSign(secret, BODY_TEXT);
  const hmac = createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
    .update(`${MSG_ID}.${NOW_S}.`)
    .update(BODY)
    .digest('base64');
  it.each([
    ['a non-numeric timestamp', headersFor(good, MSG_ID, 'soon')],
    ['an ISO timestamp', headersFor(good, MSG_ID, NOW.toISOString())],
    ['no v1 or v1a entry', headersFor(`v2,${hmac}`)],
    ['an entry without a comma', headersFor(hmac)],
    ['too many entries', headersFor(Array.from({ length: 40 }, () => good).join(' '))],
    ['a signature header over 8 KB', headersFor(`v1,${'A'.repeat(9000)}`)],
    ['a webhook-id over 8 KB', headersFor(good, 'm'.repeat(9000))],
  ])('refuses malformed headers: %s', (_, headers) => {
    expectRefused(delivery(headers), 'SIGNATURE_MALFORMED', [hmac]);
  });

  it.each([
    ['hex instead of base64', `v1,${Buffer.from(hmac, 'base64').toString('hex')}`],
    ['a truncated signature', `v1,${Buffer.from(hmac, 'base64').subarray(0, 31).toString('base64')}`],
    ['an empty v1 entry', 'v1,'],
  ])('refuses signatures that cannot match: %s', (_, signature) => {
    expectRefused(delivery(headersFor(signature)), 'SIGNATURE_INVALID', [hmac]);
  });
});
