/**
 * What an unsigned request can make Standard Webhooks verification compute (issue 14): the timestamp is
 * checked before any signature, and only a few ed25519 signatures are tried. node:crypto is wrapped with
 * pass-through spies so the signature work is counted, not timed.
 */
import { generateKeyPairSync, type KeyObject, randomBytes, sign as signEd25519 } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { verifyDelivery } from '../../../functions/senders';
import { MAX_ED25519_SIGNATURES_TRIED } from '../../../functions/senders/standard-webhooks';
import { BODY, BODY_TEXT, expectRefused, input, NOW, NOW_S } from './fixtures';

jest.mock('node:crypto', () => {
  const actual = jest.requireActual<typeof import('node:crypto')>('node:crypto');
  return { ...actual, verify: jest.fn(actual.verify), createHmac: jest.fn(actual.createHmac) };
});
const crypto = jest.requireMock<{ verify: jest.Mock; createHmac: jest.Mock }>('node:crypto');

const MSG_ID = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W';
const secret = `whsec_${randomBytes(24).toString('base64')}`;
const otherSecret = `whsec_${randomBytes(24).toString('base64')}`;

const newKeyPair = (): { privateKey: KeyObject; whpk: string } => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x ?? '';
  return { privateKey, whpk: `whpk_${Buffer.from(x, 'base64url').toString('base64')}` };
};
const sender = newKeyPair();
const v1aSign = (privateKey: KeyObject): string =>
  `v1a,${signEd25519(null, Buffer.concat([Buffer.from(`${MSG_ID}.${NOW_S}.`), BODY]), privateKey).toString('base64')}`;
const bogusV1a = (count: number): string[] =>
  Array.from({ length: count }, () => `v1a,${randomBytes(64).toString('base64')}`);
const v1 = (signingSecret: string): string => new Webhook(signingSecret).sign(MSG_ID, NOW, BODY_TEXT);
const delivery = (entries: readonly string[], secrets: string[], timestamp = NOW_S) =>
  input(
    { scheme: 'standard-webhooks', secret: 'docrelay/sw' },
    {
      secrets,
      headers: {
        'webhook-id': MSG_ID,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': entries.join(' '),
      },
    },
  );

describe('standard-webhooks verification cost', () => {
  beforeEach(() => {
    crypto.verify.mockClear();
    crypto.createHmac.mockClear();
  });

  it('counts the signature work it is meant to count (the spies see verification)', () => {
    expect(verifyDelivery(delivery([v1aSign(sender.privateKey)], [sender.whpk])).scheme).toBe(
      'standard-webhooks',
    );
    expect(crypto.verify).toHaveBeenCalledTimes(1);
    expect(verifyDelivery(delivery([v1(secret)], [secret])).scheme).toBe('standard-webhooks');
    expect(crypto.createHmac).toHaveBeenCalledTimes(1);
  });

  it('checks the timestamp before any signature: a stale request costs no signature work', () => {
    const entries = [...bogusV1a(31), v1(secret)];
    const keys = [secret, sender.whpk, newKeyPair().whpk];
    expectRefused(delivery(entries, keys, NOW_S - 301), 'TIMESTAMP_STALE');
    expectRefused(delivery(entries, keys, NOW_S + 301), 'TIMESTAMP_STALE');
    expect(crypto.verify).not.toHaveBeenCalled();
    expect(crypto.createHmac).not.toHaveBeenCalled();
  });

  it(`tries at most ${MAX_ED25519_SIGNATURES_TRIED} v1a signatures against each key, however many are presented`, () => {
    const keys = [sender.whpk, newKeyPair().whpk, newKeyPair().whpk];
    expectRefused(delivery(bogusV1a(32), keys), 'SIGNATURE_INVALID');
    expect(crypto.verify).toHaveBeenCalledTimes(MAX_ED25519_SIGNATURES_TRIED * keys.length);
  });

  it('accepts a genuine v1a signature within the cap and ignores one beyond it', () => {
    const genuine = v1aSign(sender.privateKey);
    const within = [...bogusV1a(MAX_ED25519_SIGNATURES_TRIED - 1), genuine];
    expect(verifyDelivery(delivery(within, [sender.whpk])).scheme).toBe('standard-webhooks');
    const beyond = [...bogusV1a(MAX_ED25519_SIGNATURES_TRIED), genuine];
    expectRefused(delivery(beyond, [sender.whpk]), 'SIGNATURE_INVALID');
  });

  it('checks any number of v1 signatures with one HMAC per key', () => {
    const list = [...Array.from({ length: 31 }, () => v1(otherSecret)), v1(secret)];
    crypto.createHmac.mockClear();
    expect(verifyDelivery(delivery(list, [secret])).scheme).toBe('standard-webhooks');
    expect(crypto.createHmac).toHaveBeenCalledTimes(1);
  });
});
