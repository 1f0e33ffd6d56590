import { verifyDelivery } from '../../../functions/senders';
import {
  BODY,
  BODY_TEXT,
  expectConfigError,
  expectRefused,
  input,
  RESERIALISED,
  randomSecret,
  tamper,
} from './fixtures';
import { octokitSign, octokitVerify } from './octokit-sign';

const secret = randomSecret();
const otherSecret = randomSecret();
const reserialisedText = RESERIALISED.toString('utf8');
// Signed once with GitHub's own library (@octokit/webhooks-methods), in a child process.
const [signature, reserialisedSignature] = octokitSign(secret, [BODY_TEXT, reserialisedText]) as [
  string,
  string,
];
const [otherSecretSignature] = octokitSign(otherSecret, [BODY_TEXT]) as [string];

const github = (headers: Record<string, string>, fields: { secrets?: string[]; rawBody?: Buffer } = {}) =>
  input({ scheme: 'github', secret: 'docrelay/github-webhook' }, { secrets: [secret], headers, ...fields });

describe('github scheme', () => {
  it('accepts a body signed by @octokit/webhooks-methods and returns X-GitHub-Delivery as the delivery id', () => {
    const result = verifyDelivery(
      github({
        'x-hub-signature-256': signature,
        'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
      }),
    );
    // The HMAC that matched comes back as bodyMac: the content key is a digest of it.
    expect(result).toEqual({
      scheme: 'github',
      deliveryId: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
      bodyMac: Buffer.from(signature.slice('sha256='.length), 'hex'),
    });
  });

  it('accepts upper-case hex, which is the same digest', () => {
    const upper = `sha256=${signature.slice(7).toUpperCase()}`;
    expect(verifyDelivery(github({ 'x-hub-signature-256': upper })).scheme).toBe('github');
  });

  it('refuses a signature made with another secret', () => {
    expectRefused(github({ 'x-hub-signature-256': otherSecretSignature }), 'SIGNATURE_INVALID', [
      otherSecret,
    ]);
  });

  it('refuses a body with one byte changed', () => {
    expectRefused(
      github({ 'x-hub-signature-256': signature }, { rawBody: tamper(BODY) }),
      'SIGNATURE_INVALID',
    );
  });

  it('refuses the same JSON re-serialised with different spacing', () => {
    expectRefused(
      github({ 'x-hub-signature-256': signature }, { rawBody: RESERIALISED }),
      'SIGNATURE_INVALID',
      [reserialisedSignature],
    );
  });

  it('agrees with @octokit/webhooks-methods verify on valid, tampered and re-serialised bodies', () => {
    const cases = [
      { payload: BODY_TEXT, signature },
      { payload: tamper(BODY).toString('utf8'), signature },
      { payload: reserialisedText, signature },
      { payload: BODY_TEXT, signature: otherSecretSignature },
    ];
    const theirs = octokitVerify(secret, cases);
    const ours = cases.map(({ payload, signature: presented }) => {
      try {
        verifyDelivery(github({ 'x-hub-signature-256': presented }, { rawBody: Buffer.from(payload) }));
        return true;
      } catch {
        return false;
      }
    });
    expect(ours).toEqual(theirs);
    expect(ours).toEqual([true, false, false, false]);
  });

  it('accepts the second secret during a rotation', () => {
    const result = verifyDelivery(
      github({ 'x-hub-signature-256': otherSecretSignature }, { secrets: [secret, otherSecret] }),
    );
    expect(result.scheme).toBe('github');
  });

  it('refuses a delivery without X-Hub-Signature-256, naming the header', () => {
    const error = expectRefused(
      github({ 'x-hub-signature': 'sha1=0123456789abcdef0123' }),
      'SIGNATURE_MISSING',
    );
    expect(error.detail).toBe('missing X-Hub-Signature-256 header');
  });

  it('treats an empty header as missing', () => {
    expectRefused(github({ 'x-hub-signature-256': '' }), 'SIGNATURE_MISSING');
  });

  it.each([
    ['no sha256= prefix', () => signature.slice(7)],
    ['the sha1 prefix', () => `sha1=${signature.slice(7)}`],
    ['non-hex digits', () => `sha256=${'z'.repeat(64)}`],
    ['an odd number of hex digits', () => signature.slice(0, -1)],
    ['a truncated digest', () => signature.slice(0, -2)],
    ['a digest with extra bytes', () => `${signature}00`],
    ['a second signature joined by a proxy', () => `${signature}, ${signature}`],
    ['surrounding spaces', () => ` ${signature}`],
    ['a value over 8 KB', () => `sha256=${'a'.repeat(9000)}`],
  ])('refuses a malformed header: %s', (_, value) => {
    expectRefused(github({ 'x-hub-signature-256': value() }), 'SIGNATURE_MALFORMED');
  });

  it('refuses a configuration without any secret, before looking at the request', () => {
    expectConfigError(github({ 'x-hub-signature-256': signature }, { secrets: [] }));
    expectConfigError(github({ 'x-hub-signature-256': signature }, { secrets: [''] }));
  });
});
