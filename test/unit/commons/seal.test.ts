import { randomBytes } from 'node:crypto';
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

  it('deflates large plaintexts, so a sealed repetitive body is far smaller than the body', () => {
    const sealed = sealBytes([Buffer.from('abc'.repeat(20_000))], secret, 'ctx');
    expect(sealed.length).toBeLessThan(2_000);
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
      { numRuns: 100 },
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

  it('refuses to open under another delivery or secret', () => {
    const sealed = sealPayload({ bodyText: '{}', headers: {}, query: {} }, secret, 'github', 'delivery-1');
    expect(() => openPayload(sealed, secret, 'github', 'delivery-2')).toThrow(PayloadUnavailableError);
    expect(() => openPayload(sealed, 'rotated', 'github', 'delivery-1')).toThrow(PayloadUnavailableError);
  });
});
