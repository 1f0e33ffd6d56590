import { createHmac } from 'node:crypto';
import { NodeRuntime, Webhooks } from '@paddle/paddle-node-sdk';
import { signDelivery, verifyDelivery } from '../../../functions/senders';
import { expectRefused, input, NOW, NOW_S } from './fixtures';

const BODY = Buffer.from(
  '{"event_id":"evt_01h8bz","event_type":"transaction.completed","data":{"id":"txn_1"}}',
);
const secret = 'pdl_ntfset_01gkpjp8bkm3tm53kdgkx6sms7_6h3qd3uFSi9YCD3OLYAShQI90XTI5vEI';
const other = 'pdl_ntfset_01gkpjp8bkm3tm53kdgkx6sms8_differentsecretvalue00000000000';
// Paddle's docs: HMAC-SHA256 of `${ts}:${raw body}`, hex, in `ts=...;h1=...`.
const h1 = (key: string, ts: number, body = BODY) =>
  createHmac('sha256', key).update(`${ts}:${body}`).digest('hex');
const paddle = (signature: string | undefined, fields: Parameters<typeof input>[1] = {}) =>
  input(
    { scheme: 'paddle', secret: 'docrelay/paddle' },
    {
      secrets: [secret],
      rawBody: BODY,
      headers: signature === undefined ? {} : { 'paddle-signature': signature },
      ...fields,
    },
  );

describe('paddle scheme', () => {
  beforeAll(() => NodeRuntime.initialize());
  afterEach(() => jest.useRealTimers());

  it("signs what Paddle's SDK accepts, and accepts what Paddle's docs sign", async () => {
    jest.useFakeTimers({ now: NOW, doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    const headers = signDelivery({
      config: { scheme: 'paddle' },
      secrets: [secret],
      rawBody: BODY,
      now: NOW,
    });
    await expect(
      new Webhooks().isSignatureValid(BODY.toString(), secret, headers['paddle-signature'] ?? ''),
    ).resolves.toBe(true);
    expect(verifyDelivery(paddle(`ts=${NOW_S};h1=${h1(secret, NOW_S)}`))).toEqual({
      scheme: 'paddle',
      timestamp: new Date(NOW_S * 1000),
    });
  });

  it('accepts any h1 during a secret rotation', () => {
    expect(verifyDelivery(paddle(`ts=${NOW_S};h1=${h1(other, NOW_S)};h1=${h1(secret, NOW_S)}`)).scheme).toBe(
      'paddle',
    );
  });

  it('refuses another secret, another body, a stale timestamp and a missing header', () => {
    expectRefused(paddle(`ts=${NOW_S};h1=${h1(other, NOW_S)}`), 'SIGNATURE_INVALID');
    expectRefused(
      paddle(`ts=${NOW_S};h1=${h1(secret, NOW_S)}`, { rawBody: Buffer.from(`${BODY} `) }),
      'SIGNATURE_INVALID',
    );
    expectRefused(paddle(`ts=${NOW_S - 6};h1=${h1(secret, NOW_S - 6)}`), 'TIMESTAMP_STALE');
    expect(verifyDelivery(paddle(`ts=${NOW_S - 5};h1=${h1(secret, NOW_S - 5)}`)).scheme).toBe('paddle');
    expectRefused(paddle(undefined), 'SIGNATURE_MISSING');
    expectRefused(paddle(`h1=${h1(secret, NOW_S)}`), 'SIGNATURE_MALFORMED');
    expectRefused(paddle(`ts=${NOW_S}`), 'SIGNATURE_MALFORMED');
  });
});
