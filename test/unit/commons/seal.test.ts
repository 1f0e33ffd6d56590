import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { openBytes, openJson, sealBytes, sealJson } from '../../../functions/commons/seal';
import { openPayload, PayloadUnavailableError, sealPayload } from '../../../functions/core/payload';

const secret = 'sealing-secret-for-tests-0123456789';

describe('sealBytes / openBytes', () => {
  it.each([
    ['empty', Buffer.alloc(0)],
    ['small, kept raw', Buffer.from('{"a":1}')],
    ['large, deflated', Buffer.from('x'.repeat(50_000))],
    ['random, incompressible', randomBytes(8_000)],
  ])('round-trips %s bytes', (_name, bytes) => {
    const sealed = sealBytes([bytes], secret, 'ctx');
    expect(openBytes(sealed, secret, 'ctx')?.equals(bytes)).toBe(true);
  });

  it('compresses large plaintexts, so a sealed repetitive body is far smaller than the body', () => {
    const sealed = sealBytes([Buffer.from('abc'.repeat(20_000))], secret, 'ctx');
    expect(sealed.length).toBeLessThan(2_000);
  });

  it('still opens a seal made by docrelay until 2026-11-25, deflated rather than Brotli-compressed', () => {
    // Made by the previous sealBytes (deflate level 1) over this JSON text: records written then still open.
    const old =
      'v2.zUTaDihEXMTnQTtd.H0HCm4vYQwpDW01xdb_6hQ.wjm4G5vFPM-a2WBIiXlfE2xg2uasclWCs01H4GYKc0Vnoqm5ygMeIu7MX0r-' +
      'l2fMUdmBfztCVgoIruWVdQK98Uzl0LaYGEbpCJC5qD50FKxKH-hfk_IVq6OdROUuZCWX1-n1uTEX1Qn9wXQIlgeu7tExxMWRAZ0I1C' +
      'HygJ41BUCMrfnMTbmugKwagn90EqrJ4hVId-C8sWsTdorVIZSzi2pcZ2dGjLMQcu4jD9gjge_Rn2GRJs8Ew4NX-S9hNlv81zAmh1C1L' +
      'YbNRBQt5MLelHZUS1pMaEWbRk1HREVq_JgJ6Uy0Eg8K9Oy8kpSfNh24SMPhTQWD0FVN9EkHOw';
    const text = JSON.stringify({
      note: 'sealed with deflate before 2026-11-26',
      items: Array.from({ length: 40 }, (_, i) => ({ i, name: `item ${i}` })),
    });
    expect(openBytes(old, secret, 'payload:old:1')?.toString()).toBe(text);
  });

  it('refuses a seal whose first byte names no compression it knows', () => {
    // Sealed by hand as sealBytes does, with method byte 7.
    const key = Buffer.from(hkdfSync('sha256', secret, 'docrelay/seal', 'docrelay/seal/v2', 32));
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from('ctx'));
    const body = Buffer.concat([cipher.update(Buffer.from([7, 0x7b, 0x7d])), cipher.final()]);
    const sealed = ['v2', iv, cipher.getAuthTag(), body].map((p) =>
      typeof p === 'string' ? p : p.toString('base64url'),
    );
    expect(openBytes(sealed.join('.'), secret, 'ctx')).toBeUndefined();
  });

  it('draws a different IV for every seal, across refills of its pool of random IVs', () => {
    const ivs = new Set(
      Array.from({ length: 600 }, () => sealBytes([Buffer.from('x')], secret, 'c').split('.')[1]),
    );
    expect(ivs.size).toBe(600);
  });

  it('never shows the plaintext: the sealed text holds no run of it, raw or base64', () => {
    const marker = 'MARKER-7f3a9c-NEVER-IN-CLEAR';
    const sealed = sealBytes([Buffer.from(`{"note":"${marker}"}`)], secret, 'ctx');
    expect(sealed).not.toContain(marker);
    expect(Buffer.from(sealed.split('.')[3] ?? '', 'base64url').toString('latin1')).not.toContain(marker);
  });

  it('opens only with the same secret and the same context, and not when tampered with', () => {
    const sealed = sealBytes([Buffer.from('payload')], secret, 'payload:a:1');
    expect(openBytes(sealed, 'another-secret', 'payload:a:1')).toBeUndefined();
    expect(openBytes(sealed, secret, 'payload:a:2')).toBeUndefined();
    const [v, iv, tag, body] = sealed.split('.') as [string, string, string, string];
    const flipped = Buffer.from(body, 'base64url');
    flipped[0] = (flipped[0] as number) ^ 1;
    expect(
      openBytes([v, iv, tag, flipped.toString('base64url')].join('.'), secret, 'payload:a:1'),
    ).toBeUndefined();
    expect(openBytes('v1.x.y.z', secret, 'payload:a:1')).toBeUndefined();
    expect(openBytes('garbage', secret, 'payload:a:1')).toBeUndefined();
  });

  it.each([12, 8, 4])('refuses the genuine tag cut to %i bytes (only 16-byte tags open)', (bytes) => {
    const sealed = sealBytes([Buffer.from('payload')], secret, 'ctx');
    const [v, iv, tag, body] = sealed.split('.') as [string, string, string, string];
    const cut = Buffer.from(tag, 'base64url').subarray(0, bytes).toString('base64url');
    expect(openBytes([v, iv, cut, body].join('.'), secret, 'ctx')).toBeUndefined();
    expect(openBytes(sealed, secret, 'ctx')?.toString()).toBe('payload');
  });

  it('uses a fresh IV each time, so equal plaintexts seal differently', () => {
    expect(sealBytes([Buffer.from('same')], secret, 'c')).not.toEqual(
      sealBytes([Buffer.from('same')], secret, 'c'),
    );
  });

  it('round-trips any bytes in any number of parts (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 3_000 }), { maxLength: 4 }),
        fc.string(),
        (arrays, context) => {
          const parts = arrays.map((a) => Buffer.from(a));
          const opened = openBytes(sealBytes(parts, secret, context), secret, context);
          expect(opened?.equals(Buffer.concat(parts))).toBe(true);
        },
      ),
      { numRuns: 100, seed: 20261126 },
    );
  });
});

describe('sealJson / openJson', () => {
  it('round-trips a value and refuses another context', () => {
    const links = { f1: 'https://docs.example.com/download?token=secret' };
    const sealed = sealJson(links, secret, 'links:job-1');
    expect(openJson(sealed, secret, 'links:job-1')).toEqual(links);
    expect(openJson(sealed, secret, 'links:job-2')).toBeUndefined();
  });
});

describe('sealPayload / openPayload', () => {
  it('keeps the body text exactly as received, newlines and all, with headers and query', () => {
    const payload = {
      bodyText: '{\n  "a": "line\\nbreak",\n  "b": [1, 2]\n}\n',
      headers: { 'content-type': 'application/json', 'x-github-event': 'release' },
      query: { source: 'test\nnewline' },
    };
    const sealed = sealPayload(payload, secret, 'github', 'delivery-1');
    expect(openPayload(sealed, secret, 'github', 'delivery-1')).toEqual(payload);
  });

  it('seals the body bytes when given them (the ingest has the raw body), opening to the same text', () => {
    const bodyText = `{"name":"Zoë","notes":"${'x'.repeat(2_000)}"}`;
    const payload = { bodyText, headers: {}, query: {} };
    const sealed = sealPayload({ ...payload, bodyBytes: Buffer.from(bodyText) }, secret, 'gh', 'd-1');
    expect(openPayload(sealed, secret, 'gh', 'd-1')).toEqual(payload);
  });

  it('refuses to open under another delivery or secret', () => {
    const sealed = sealPayload({ bodyText: '{}', headers: {}, query: {} }, secret, 'github', 'delivery-1');
    expect(() => openPayload(sealed, secret, 'github', 'delivery-2')).toThrow(PayloadUnavailableError);
    expect(() => openPayload(sealed, 'rotated', 'github', 'delivery-1')).toThrow(PayloadUnavailableError);
  });
});
