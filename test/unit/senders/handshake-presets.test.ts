/**
 * The presets with a challenge or handshake (Slack, Zoom, Discord, Asana, Meta, SNS, Xero) and the generic
 * `hmac` scheme: each verifies as its sender documents, refuses a wrong key, another body, a stale timestamp
 * and a missing header, and answers its handshake (after verifying it where the sender signs it).
 */
import { createHmac, generateKeyPairSync, sign as signBytes } from 'node:crypto';
import { verifyKey } from 'discord-interactions';
import {
  type HandshakeContext,
  type HandshakeRequest,
  SignatureError,
  senderScheme,
  signDelivery,
  type VerifyConfig,
  verifyDelivery,
} from '../../../functions/senders';
import { ASANA_WINDOW_MAX_MINUTES, asanaWindowValue } from '../../../functions/senders/asana';
import { signSnsMessage } from '../../../functions/senders/sns';
import { expectRefused, input, NOW, NOW_S, randomSecret, TEST_URL } from './fixtures';

const hmacHex = (key: string, text: string | Buffer): string =>
  createHmac('sha256', key).update(text).digest('hex');

/** A handshake context that records what it was asked to do. */
function fakeContext(secrets: Record<string, string> = {}) {
  const fetched: string[] = [];
  const kept: string[] = [];
  const context: HandshakeContext = {
    fetch: async (url) => {
      fetched.push(url);
      return { status: 200, body: '<ConfirmSubscriptionResponse/>' };
    },
    keepSecret: async (value) => {
      kept.push(value);
    },
    secret: async (name) => secrets[name] ?? '',
    rereadSecrets: async () => (secrets.reread === undefined ? [] : [secrets.reread]),
  };
  return { context, fetched, kept };
}

const handshakeOf = (config: VerifyConfig, fields: Partial<HandshakeRequest>): HandshakeRequest => ({
  ...input(config),
  query: {},
  ...fields,
});

async function answer(
  config: VerifyConfig,
  fields: Partial<HandshakeRequest>,
  context = fakeContext().context,
) {
  const scheme = senderScheme(config.scheme);
  if (scheme?.handshake === undefined) throw new Error(`${config.scheme} has no handshake`);
  return scheme.handshake(handshakeOf(config, fields), context);
}

describe('slack url_verification', () => {
  const config: VerifyConfig = { scheme: 'slack', secret: 's' };
  const secret = randomSecret();
  const body = Buffer.from(
    '{"token":"t","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}',
  );
  const signed = signDelivery({ config, secrets: [secret], rawBody: body, now: NOW });

  it('answers the challenge once the request verifies, and creates nothing', async () => {
    expect(await answer(config, { rawBody: body, headers: signed, secrets: [secret] })).toEqual({
      status: 200,
      contentType: 'application/json',
      body: '{"challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}',
    });
  });

  it('refuses an unsigned challenge, and leaves ordinary events to verify', async () => {
    await expect(answer(config, { rawBody: body, headers: {}, secrets: [secret] })).rejects.toThrow(
      SignatureError,
    );
    expect(
      await answer(config, { rawBody: Buffer.from('{"type":"event_callback"}'), secrets: [secret] }),
    ).toBeUndefined();
  });
});

describe('zoom', () => {
  const config: VerifyConfig = { scheme: 'zoom', secret: 's' };
  const secret = randomSecret();
  const body = Buffer.from('{"event":"meeting.started","payload":{"object":{"id":"1"}},"event_ts":1}');
  // Zoom's documentation: message = `v0:${x-zm-request-timestamp}:${body}`, header `v0=${hex HMAC}`.
  const headers = (at = NOW_S, key = secret, bytes = body) => ({
    'x-zm-request-timestamp': String(at),
    'x-zm-signature': `v0=${hmacHex(key, `v0:${at}:${bytes.toString()}`)}`,
  });

  it('accepts the signature as Zoom documents it', () => {
    expect(
      verifyDelivery(input(config, { rawBody: body, headers: headers(), secrets: [secret] })).scheme,
    ).toBe('zoom');
  });

  it('refuses a wrong key, another body, a stale timestamp and a missing header', () => {
    expectRefused(
      input(config, { rawBody: body, headers: headers(NOW_S, randomSecret()), secrets: [secret] }),
      'SIGNATURE_INVALID',
    );
    expectRefused(
      input(config, { rawBody: Buffer.from('{}'), headers: headers(), secrets: [secret] }),
      'SIGNATURE_INVALID',
    );
    expectRefused(
      input(config, { rawBody: body, headers: headers(NOW_S - 301), secrets: [secret] }),
      'TIMESTAMP_STALE',
    );
    expectRefused(
      input(config, {
        rawBody: body,
        headers: { 'x-zm-request-timestamp': String(NOW_S) },
        secrets: [secret],
      }),
      'SIGNATURE_MISSING',
    );
  });

  it('answers endpoint.url_validation with the HMAC of the plain token, only when signed', async () => {
    const validation = Buffer.from(
      '{"payload":{"plainToken":"qgg8vlvZRS6UYooatFL8Aw"},"event_ts":1654503849680,"event":"endpoint.url_validation"}',
    );
    const signed = headers(NOW_S, secret, validation);
    expect(await answer(config, { rawBody: validation, headers: signed, secrets: [secret] })).toEqual({
      status: 200,
      contentType: 'application/json',
      body: JSON.stringify({
        plainToken: 'qgg8vlvZRS6UYooatFL8Aw',
        encryptedToken: hmacHex(secret, 'qgg8vlvZRS6UYooatFL8Aw'),
      }),
    });
    await expect(answer(config, { rawBody: validation, headers: {}, secrets: [secret] })).rejects.toThrow(
      SignatureError,
    );
  });
});

describe('discord', () => {
  const config: VerifyConfig = { scheme: 'discord', secret: 's' };
  const pair = generateKeyPairSync('ed25519');
  // The developer portal shows the public key as 64 hex digits: the raw key, after the SPKI prefix.
  const publicHex = pair.publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('hex');
  const body = Buffer.from('{"id":"1234","type":2,"data":{"name":"invoice"}}');
  const headers = (at = NOW_S, bytes = body, key = pair.privateKey) => ({
    'x-signature-timestamp': String(at),
    'x-signature-ed25519': signBytes(null, Buffer.concat([Buffer.from(String(at)), bytes]), key).toString(
      'hex',
    ),
  });

  it('accepts what discord-interactions accepts, with the portal public key, the id from the body', async () => {
    const signed = headers();
    expect(
      await verifyKey(body, signed['x-signature-ed25519'], signed['x-signature-timestamp'], publicHex),
    ).toBe(true);
    expect(
      verifyDelivery(input(config, { rawBody: body, headers: signed, secrets: [publicHex] })).scheme,
    ).toBe('discord');
  });

  it('refuses a wrong key, another body, a stale timestamp and a missing header', () => {
    const other = generateKeyPairSync('ed25519').privateKey;
    expectRefused(
      input(config, { rawBody: body, headers: headers(NOW_S, body, other), secrets: [publicHex] }),
      'SIGNATURE_INVALID',
    );
    expectRefused(
      input(config, { rawBody: Buffer.from('{}'), headers: headers(), secrets: [publicHex] }),
      'SIGNATURE_INVALID',
    );
    expectRefused(
      input(config, { rawBody: body, headers: headers(NOW_S - 301), secrets: [publicHex] }),
      'TIMESTAMP_STALE',
    );
    expectRefused(
      input(config, {
        rawBody: body,
        headers: { 'x-signature-timestamp': String(NOW_S) },
        secrets: [publicHex],
      }),
      'SIGNATURE_MISSING',
    );
  });

  it('answers a verified PING with {"type":1}', async () => {
    const ping = Buffer.from('{"type":1,"id":"p"}');
    expect(
      await answer(config, { rawBody: ping, headers: headers(NOW_S, ping), secrets: [publicHex] }),
    ).toMatchObject({ status: 200, body: '{"type":1}' });
    await expect(answer(config, { rawBody: ping, headers: headers(), secrets: [publicHex] })).rejects.toThrow(
      SignatureError,
    );
  });
});

describe('asana', () => {
  const config: VerifyConfig = { scheme: 'asana', secret: 's' };
  const hookSecret = randomSecret();

  const window = (minutes: number) => asanaWindowValue(new Date(NOW.getTime() + minutes * 60_000));

  it('echoes X-Hook-Secret and keeps it inside a window the operator opened', async () => {
    const fake = fakeContext();
    const result = await answer(
      config,
      { headers: { 'x-hook-secret': hookSecret }, secrets: [window(10)] },
      fake.context,
    );
    expect(result).toMatchObject({ status: 200, headers: { 'x-hook-secret': hookSecret } });
    expect(fake.kept).toEqual([hookSecret]);
  });

  it('refuses a handshake with no window, an expired one or one longer than the maximum', async () => {
    for (const kept of ['pending', '', window(-1), window(ASANA_WINDOW_MAX_MINUTES + 5)]) {
      const fake = fakeContext();
      await expect(
        answer(config, { headers: { 'x-hook-secret': hookSecret }, secrets: [kept] }, fake.context),
      ).rejects.toThrow(/no handshake window is open/);
      expect(fake.kept).toEqual([]);
    }
  });

  it('reads the secret again when the cached value opens no window (a window opened moments ago)', async () => {
    const fake = fakeContext({ reread: window(5) });
    await answer(config, { headers: { 'x-hook-secret': hookSecret }, secrets: ['pending'] }, fake.context);
    expect(fake.kept).toEqual([hookSecret]);
  });

  it('never replaces a kept secret with another handshake, and echoes the kept one again', async () => {
    const fake = fakeContext();
    await expect(
      answer(config, { headers: { 'x-hook-secret': randomSecret() }, secrets: [hookSecret] }, fake.context),
    ).rejects.toThrow(SignatureError);
    await answer(config, { headers: { 'x-hook-secret': hookSecret }, secrets: [hookSecret] }, fake.context);
    expect(fake.kept).toEqual([]);
  });

  it('verifies X-Hook-Signature, the hex HMAC of the body, and refuses while nothing is kept', () => {
    const body = Buffer.from('{"events":[{"action":"changed"}]}');
    const headers = { 'x-hook-signature': hmacHex(hookSecret, body) };
    expect(verifyDelivery(input(config, { rawBody: body, headers, secrets: [hookSecret] })).scheme).toBe(
      'asana',
    );
    expectRefused(input(config, { rawBody: body, headers, secrets: [randomSecret()] }), 'SIGNATURE_INVALID');
    expectRefused(
      input(config, { rawBody: Buffer.from('{}'), headers, secrets: [hookSecret] }),
      'SIGNATURE_INVALID',
    );
    expectRefused(input(config, { rawBody: body, headers: {}, secrets: [hookSecret] }), 'SIGNATURE_MISSING');
    expectRefused(input(config, { rawBody: body, headers, secrets: ['pending'] }), 'SIGNATURE_INVALID');
    expectRefused(input(config, { rawBody: body, headers, secrets: [window(5)] }), 'SIGNATURE_INVALID');
  });
});

describe('meta', () => {
  const config: VerifyConfig = { scheme: 'meta', secret: 's', verifyTokenSecret: 'meta/verify' };
  const appSecret = randomSecret();
  const token = randomSecret();
  const query = { 'hub.mode': 'subscribe', 'hub.verify_token': token, 'hub.challenge': '1158201444' };

  it('takes GET, and answers hub.challenge when the verify token matches', async () => {
    expect(senderScheme('meta')?.methods).toContain('GET');
    const fake = fakeContext({ 'meta/verify': token });
    expect(await answer(config, { method: 'GET', query }, fake.context)).toMatchObject({
      status: 200,
      body: '1158201444',
    });
    await expect(
      answer(config, { method: 'GET', query: { ...query, 'hub.verify_token': 'guess' } }, fake.context),
    ).rejects.toThrow(SignatureError);
    expect(await answer(config, { method: 'POST' }, fake.context)).toBeUndefined();
  });

  it('verifies X-Hub-Signature-256 as sha256=<hex> of the body with the app secret', () => {
    const body = Buffer.from('{"object":"page","entry":[]}');
    const headers = { 'x-hub-signature-256': `sha256=${hmacHex(appSecret, body)}` };
    expect(verifyDelivery(input(config, { rawBody: body, headers, secrets: [appSecret] })).scheme).toBe(
      'meta',
    );
    expectRefused(input(config, { rawBody: body, headers, secrets: [randomSecret()] }), 'SIGNATURE_INVALID');
    expectRefused(
      input(config, { rawBody: Buffer.from('{}'), headers, secrets: [appSecret] }),
      'SIGNATURE_INVALID',
    );
    expectRefused(input(config, { rawBody: body, headers: {}, secrets: [appSecret] }), 'SIGNATURE_MISSING');
  });
});

describe('xero', () => {
  const config: VerifyConfig = { scheme: 'xero', secret: 's' };
  const key = randomSecret();
  const intent = Buffer.from(
    '{"events":[],"firstEventSequence":0,"lastEventSequence":0,"entropy":"S0m3r4Nd0mt3xt"}',
  );
  const sig = (bytes: Buffer, k = key) => ({
    'x-xero-signature': createHmac('sha256', k).update(bytes).digest('base64'),
  });

  it('answers a correctly signed intent-to-receive 200 with an empty body, a wrongly signed one 401', async () => {
    expect(await answer(config, { rawBody: intent, headers: sig(intent), secrets: [key] })).toEqual({
      status: 200,
      contentType: 'text/plain',
      body: '',
    });
    await expect(
      answer(config, { rawBody: intent, headers: sig(intent, randomSecret()), secrets: [key] }),
    ).rejects.toThrow(SignatureError);
  });

  it('verifies deliveries with events, and refuses a missing header', () => {
    const body = Buffer.from('{"events":[{"eventId":"e1"}]}');
    expect(verifyDelivery(input(config, { rawBody: body, headers: sig(body), secrets: [key] })).scheme).toBe(
      'xero',
    );
    expectRefused(
      input(config, { rawBody: body, headers: sig(intent), secrets: [key] }),
      'SIGNATURE_INVALID',
    );
    expectRefused(input(config, { rawBody: body, headers: {}, secrets: [key] }), 'SIGNATURE_MISSING');
  });
});

describe('sns', () => {
  const topic = 'arn:aws:sns:eu-west-1:123456789012:orders';
  const config: VerifyConfig = { scheme: 'sns', secret: 's', topicArn: topic };
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privatePem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const publicPem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
  const base = {
    MessageId: 'da41e39f-ea4d-435a-b922-c6aae3915ebe',
    TopicArn: topic,
    Timestamp: NOW.toISOString(),
    SignatureVersion: '2',
    SigningCertURL: 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-abc.pem',
  };
  const notification = (fields: Record<string, string> = {}, key = privatePem) =>
    Buffer.from(
      JSON.stringify(
        signSnsMessage({ ...base, Type: 'Notification', Message: '{"order":"A-1"}', ...fields }, key),
      ),
    );

  it('verifies a notification signed over the documented fields; the MessageId is the delivery id', () => {
    expect(verifyDelivery(input(config, { rawBody: notification(), secrets: [publicPem] }))).toMatchObject({
      scheme: 'sns',
      deliveryId: base.MessageId,
    });
    expect(
      verifyDelivery(
        input(config, {
          rawBody: notification({ SignatureVersion: '1', Subject: 'hi' }),
          secrets: [publicPem],
        }),
      ).scheme,
    ).toBe('sns');
  });

  it('refuses a wrong key, a changed message, another topic, a stale one, a foreign certificate host', () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    expectRefused(
      input(config, { rawBody: notification({}, other), secrets: [publicPem] }),
      'SIGNATURE_INVALID',
    );
    const changed = Buffer.from(notification().toString().replace('A-1', 'A-2'));
    expectRefused(input(config, { rawBody: changed, secrets: [publicPem] }), 'SIGNATURE_INVALID');
    expectRefused(
      input(config, { rawBody: notification({ TopicArn: `${topic}-other` }), secrets: [publicPem] }),
      'SIGNATURE_INVALID',
    );
    expectRefused(
      input(config, {
        rawBody: notification({ Timestamp: new Date(NOW.getTime() - 3_601_000).toISOString() }),
        secrets: [publicPem],
      }),
      'TIMESTAMP_STALE',
    );
    expectRefused(
      input(config, {
        rawBody: notification({ SigningCertURL: 'https://sns.eu-west-1.amazonaws.com.evil.test/x.pem' }),
        secrets: [publicPem],
      }),
      'SIGNATURE_INVALID',
    );
    const unsigned = JSON.stringify({ ...base, Type: 'Notification', Message: 'x' });
    expectRefused(
      input(config, { rawBody: Buffer.from(unsigned), secrets: [publicPem] }),
      'SIGNATURE_MISSING',
    );
  });

  it('confirms a verified SubscriptionConfirmation by fetching its SNS SubscribeURL, and nothing else', async () => {
    const subscribeUrl = 'https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=x&Token=t';
    const confirmation = (url: string) =>
      Buffer.from(
        JSON.stringify(
          signSnsMessage(
            { ...base, Type: 'SubscriptionConfirmation', Message: 'confirm', Token: 't', SubscribeURL: url },
            privatePem,
          ),
        ),
      );
    const fake = fakeContext();
    expect(
      await answer(config, { rawBody: confirmation(subscribeUrl), secrets: [publicPem] }, fake.context),
    ).toMatchObject({ status: 200 });
    expect(fake.fetched).toEqual([subscribeUrl]);
    const elsewhere = fakeContext();
    await expect(
      answer(
        config,
        { rawBody: confirmation('https://169.254.169.254/latest'), secrets: [publicPem] },
        elsewhere.context,
      ),
    ).rejects.toThrow(SignatureError);
    expect(elsewhere.fetched).toEqual([]);
    expect(
      await answer(config, { rawBody: notification(), secrets: [publicPem] }, elsewhere.context),
    ).toBeUndefined();
  });
});

describe('hmac (generic, described in YAML)', () => {
  const secret = randomSecret();
  const config: VerifyConfig = {
    scheme: 'hmac',
    secret: 's',
    header: 'x-acme-signature',
    algorithm: 'sha512',
    encoding: 'base64',
    prefix: 'v1,',
    signedContent: '{id}.{timestamp}.{method} {url}.{body}',
    timestampHeader: 'x-acme-timestamp',
    idHeader: 'x-acme-id',
    toleranceSeconds: 60,
  };
  const body = Buffer.from('{"order":"A-1"}');
  const headers = (at = NOW_S, key = secret, bytes = body) => ({
    'x-acme-id': 'evt_1',
    'x-acme-timestamp': String(at),
    'x-acme-signature': `v1,${createHmac('sha512', key).update(`evt_1.${at}.POST ${TEST_URL}.${bytes.toString()}`).digest('base64')}`,
  });

  it('verifies the configured signed content; the id header is the delivery id', () => {
    expect(
      verifyDelivery(input(config, { rawBody: body, headers: headers(), secrets: [secret] })),
    ).toMatchObject({ scheme: 'hmac', deliveryId: 'evt_1' });
  });

  it('refuses a wrong key, another body, another URL, a stale timestamp and a missing header', () => {
    expectRefused(
      input(config, { rawBody: body, headers: headers(NOW_S, randomSecret()), secrets: [secret] }),
      'SIGNATURE_INVALID',
    );
    expectRefused(
      input(config, { rawBody: Buffer.from('{}'), headers: headers(), secrets: [secret] }),
      'SIGNATURE_INVALID',
    );
    expectRefused(
      input(config, { rawBody: body, headers: headers(), secrets: [secret], url: `${TEST_URL}&x=1` }),
      'SIGNATURE_INVALID',
    );
    expectRefused(
      input(config, { rawBody: body, headers: headers(NOW_S - 61), secrets: [secret] }),
      'TIMESTAMP_STALE',
    );
    const { 'x-acme-timestamp': _, ...withoutTimestamp } = headers();
    expectRefused(
      input(config, { rawBody: body, headers: withoutTimestamp, secrets: [secret] }),
      'SIGNATURE_MISSING',
    );
  });

  it('signs what it verifies (docrelay send), and defaults to hex HMAC-SHA256 of the body', () => {
    const signed = signDelivery({
      config,
      secrets: [secret],
      rawBody: body,
      now: NOW,
      url: TEST_URL,
      deliveryId: 'evt_9',
    });
    expect(
      verifyDelivery(input(config, { rawBody: body, headers: signed, secrets: [secret] })).deliveryId,
    ).toBe('evt_9');
    const plain: VerifyConfig = { scheme: 'hmac', secret: 's', header: 'x-sig' };
    expect(
      verifyDelivery(
        input(plain, { rawBody: body, headers: { 'x-sig': hmacHex(secret, body) }, secrets: [secret] }),
      ).scheme,
    ).toBe('hmac');
  });
});
