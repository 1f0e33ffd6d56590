/**
 * SNS certificates fetched from the SigningCertURL (issue 39 item 6), over an injected fetch and trust store
 * (no network): a chain made here with openssl (a root, an intermediate served at the leaf's CA Issuers URL,
 * a leaf for sns.amazonaws.com) is accepted and cached; other hosts, foreign chains and self-made certificates
 * are refused; the ingest verifies an SNS integration without a pinned secret; SignatureVersion 1 can be refused.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../../functions/config/load';
import { acceptWebhook } from '../../../functions/core/accept-delivery';
import { SignatureError, type VerifyConfig, verifyDelivery } from '../../../functions/senders';
import { isSnsUrl, signSnsMessage } from '../../../functions/senders/sns';
import { type CertificateFetch, snsCertificateSource } from '../../../functions/senders/sns-certificates';
import { memoryBench } from '../core/support';
import { expectRefused, input, NOW } from './fixtures';

const CERT_URL = 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-test.pem';
const ISSUER_URL = 'http://crt.test.amazontrust.com/intermediate.cer';
const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:orders';

let dir: string;
const pem: Record<string, string> = {};
let intermediateDer: Buffer;
let leafKey: string;
let otherKey: string;
/** The certificates' clock: just after they are made (valid ten years). */
let certNow: Date;

const openssl = (...args: string[]): void => {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'docrelay-sns-certs-'));
  writeFileSync(
    join(dir, 'ca.ext'),
    'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n',
  );
  writeFileSync(
    join(dir, 'leaf.ext'),
    `basicConstraints=CA:FALSE\nsubjectAltName=DNS:sns.amazonaws.com\nauthorityInfoAccess=caIssuers;URI:${ISSUER_URL}\n`,
  );
  const days = ['-days', '3650'];
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'root.key',
    '-out',
    'root.pem',
    '-subj',
    '/CN=Test Root',
    ...days,
  );
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'other.key',
    '-out',
    'other.pem',
    '-subj',
    '/CN=Other Root',
    ...days,
  );
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'int.key',
    '-out',
    'int.csr',
    '-subj',
    '/CN=Test Intermediate',
  );
  openssl(
    'x509',
    '-req',
    '-in',
    'int.csr',
    '-CA',
    'root.pem',
    '-CAkey',
    'root.key',
    '-CAcreateserial',
    '-out',
    'int.pem',
    '-extfile',
    'ca.ext',
    ...days,
  );
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'leaf.key',
    '-out',
    'leaf.csr',
    '-subj',
    '/CN=sns.amazonaws.com',
  );
  openssl(
    'x509',
    '-req',
    '-in',
    'leaf.csr',
    '-CA',
    'int.pem',
    '-CAkey',
    'int.key',
    '-CAcreateserial',
    '-out',
    'leaf.pem',
    '-extfile',
    'leaf.ext',
    ...days,
  );
  // An attacker's own certificate for the same name, self-signed.
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'self.key',
    '-out',
    'self.pem',
    '-subj',
    '/CN=sns.amazonaws.com',
    '-addext',
    'subjectAltName=DNS:sns.amazonaws.com',
    ...days,
  );
  openssl('x509', '-in', 'int.pem', '-outform', 'DER', '-out', 'int.der');
  for (const name of ['root', 'other', 'int', 'leaf', 'self'])
    pem[name] = readFileSync(join(dir, `${name}.pem`), 'utf8');
  intermediateDer = readFileSync(join(dir, 'int.der'));
  leafKey = readFileSync(join(dir, 'leaf.key'), 'utf8');
  otherKey = readFileSync(join(dir, 'self.key'), 'utf8');
  certNow = new Date(Date.now() + 1000);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A fetch serving `files` by URL, counting requests. */
function served(files: Record<string, string | Buffer>) {
  const requested: string[] = [];
  const fetch: CertificateFetch = async (url) => {
    requested.push(url);
    const file = files[url];
    return file === undefined
      ? { status: 404, body: Buffer.alloc(0) }
      : { status: 200, body: Buffer.from(file) };
  };
  return { fetch, requested };
}

const genuine = () => served({ [CERT_URL]: pem.leaf ?? '', [ISSUER_URL]: intermediateDer });

describe('SNS certificates from the SigningCertURL', () => {
  it('accepts a leaf that chains to a trust anchor through its CA Issuers intermediate, and caches it', async () => {
    const { fetch, requested } = genuine();
    const source = snsCertificateSource({ fetch, trust: [pem.root ?? ''], now: () => certNow });
    const [first, second] = await Promise.all([source.get(CERT_URL), source.get(CERT_URL)]);
    expect(first).toContain('BEGIN CERTIFICATE');
    expect(second).toBe(first);
    expect(await source.get(CERT_URL)).toBe(first);
    expect(requested).toEqual([CERT_URL, ISSUER_URL]);
  });

  it('refuses a chain to another root, a self-signed certificate and a host that is not SNS, before any fetch', async () => {
    const otherRoot = snsCertificateSource({
      fetch: genuine().fetch,
      trust: [pem.other ?? ''],
      now: () => certNow,
    });
    await expect(otherRoot.get(CERT_URL)).rejects.toThrow(/does not chain to a trusted root/);
    const self = served({ [CERT_URL]: pem.self ?? '' });
    const selfSigned = snsCertificateSource({
      fetch: self.fetch,
      trust: [pem.root ?? ''],
      now: () => certNow,
    });
    await expect(selfSigned.get(CERT_URL)).rejects.toThrow(SignatureError);
    const hosts = genuine();
    const source = snsCertificateSource({ fetch: hosts.fetch, trust: [pem.root ?? ''], now: () => certNow });
    for (const url of [
      'http://sns.eu-west-1.amazonaws.com/x.pem',
      'https://sns.eu-west-1.amazonaws.com.evil.test/x.pem',
      'https://sns.eu-west-1.amazonaws.com:8443/x.pem',
      'https://evil.test/x.pem',
    ]) {
      await expect(source.get(url)).rejects.toThrow(SignatureError);
    }
    expect(hosts.requested).toEqual([]);
  });

  it('refuses a certificate that has expired, and does not cache a failure', async () => {
    const later = new Date(certNow.getTime() + 20 * 365 * 86_400_000);
    const expired = snsCertificateSource({
      fetch: genuine().fetch,
      trust: [pem.root ?? ''],
      now: () => later,
    });
    await expect(expired.get(CERT_URL)).rejects.toThrow(/not valid now/);
    let calls = 0;
    const flaky = snsCertificateSource({
      fetch: async (url) => {
        calls += 1;
        return calls === 1 ? { status: 503, body: Buffer.alloc(0) } : genuine().fetch(url);
      },
      trust: [pem.root ?? ''],
      now: () => certNow,
    });
    await expect(flaky.get(CERT_URL)).rejects.toThrow(/answered 503/);
    await expect(flaky.get(CERT_URL)).resolves.toContain('BEGIN CERTIFICATE');
  });

  it('agrees with the subscription fetch on the China regions', () => {
    expect(isSnsUrl('https://sns.cn-north-1.amazonaws.com.cn/x.pem')).toBe(true);
    expect(isSnsUrl('https://sns.cn-north-1.amazonaws.com.cn.evil.test/x.pem')).toBe(false);
  });
});

describe('the ingest with an SNS integration that pins no certificate', () => {
  const message = (key: string, fields: Record<string, string> = {}) =>
    Buffer.from(
      JSON.stringify(
        signSnsMessage(
          {
            Type: 'Notification',
            MessageId: `m-${Object.keys(fields).length}-${key.length}`,
            TopicArn: TOPIC,
            Message: '{"order":"A-1"}',
            Timestamp: NOW.toISOString(),
            SignatureVersion: '2',
            SigningCertURL: CERT_URL,
            ...fields,
          },
          key,
        ),
      ),
    );

  it('accepts a message signed with the fetched certificate and refuses one signed with another key', async () => {
    const b = memoryBench();
    const ingest = {
      ...b.ingest,
      now: () => NOW,
      certificates: snsCertificateSource({
        fetch: genuine().fetch,
        trust: [pem.root ?? ''],
        now: () => certNow,
      }),
      config: parseConfig(`service: { baseUrl: "http://127.0.0.1:9", apiKeySecret: unit/api-key }
integrations:
  - id: topic
    verify: { scheme: sns, topicArn: "${TOPIC}", minSignatureVersion: 2 }
    documents:
      - { name: note, template: { id: "9001" }, data: { Title: "Message" } }
`),
    };
    const request = (rawBody: Buffer) => ({
      integrationId: 'topic',
      headers: { 'content-type': 'text/plain' },
      rawBody,
      query: {},
      method: 'POST',
      url: 'https://hooks.example.test/v1/hooks/topic',
    });
    expect((await acceptWebhook(ingest, request(message(leafKey)))).status).toBe(202);
    await expect(acceptWebhook(ingest, request(message(otherKey)))).rejects.toThrow(SignatureError);
    expect(b.queue.jobIds).toHaveLength(1);
  });

  it('refuses SignatureVersion 1 with minSignatureVersion: 2', () => {
    const config: VerifyConfig = { scheme: 'sns', topicArn: TOPIC, minSignatureVersion: 2 };
    const rawBody = message(leafKey, { SignatureVersion: '1' });
    expectRefused(input(config, { rawBody, secrets: [pem.leaf ?? ''] }), 'SIGNATURE_INVALID');
    expect(
      verifyDelivery(input({ ...config, minSignatureVersion: 1 }, { rawBody, secrets: [pem.leaf ?? ''] }))
        .scheme,
    ).toBe('sns');
  });
});
