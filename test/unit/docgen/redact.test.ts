import fc from 'fast-check';
import { redactUrl, sanitizeCause, scrubText } from '../../../functions/docgen/redact';

describe('redactUrl', () => {
  it('keeps origin and path and hides the query string', () => {
    expect(redactUrl('https://docs.example.com/download?ver=1&fileId=abc&token=s3cr3t')).toBe(
      'https://docs.example.com/download?<redacted>',
    );
  });

  it('hides credentials and fragments too', () => {
    expect(redactUrl('https://user:pass@h.example/p#tok')).toBe('https://h.example/p?<redacted>');
  });

  it('leaves a URL without a query as it is', () => {
    expect(redactUrl('http://127.0.0.1:8080/v1.0/templates')).toBe('http://127.0.0.1:8080/v1.0/templates');
  });

  it('cuts the query of a relative or unparsable link', () => {
    expect(redactUrl('/files/1?token=abc')).toBe('/files/1?<redacted>');
  });

  it('never returns any part of a query value (property)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Za-z0-9_-]{12,40}$/), fc.webPath(), (token, path) => {
        const out = redactUrl(`https://files.example.com${path}?fileId=1&token=${token}`);
        return !out.includes(token);
      }),
    );
  });
});

describe('scrubText', () => {
  it('redacts URLs with queries anywhere in text and every secret given', () => {
    const text =
      'GET https://f.example/x?token=ZZZtokenZZZ failed with key KEY-1234567 (see http://a.example/y)';
    const out = scrubText(text, ['KEY-1234567']);
    expect(out).toBe(
      'GET https://f.example/x?<redacted> failed with key <redacted> (see http://a.example/y)',
    );
  });
});

describe('sanitizeCause', () => {
  it('copies an error chain with scrubbed messages and stacks, keeping codes', () => {
    const inner = Object.assign(new Error('connect ECONNREFUSED for https://f.example/d?t=TOKEN123456'), {
      code: 'ECONNREFUSED',
    });
    const outer = new TypeError('fetch failed with KEY-abcdef', { cause: inner });
    const copy = sanitizeCause(outer, ['KEY-abcdef']) as Error;
    const copiedInner = copy.cause as Error & { code: string };
    expect(copy.name).toBe('TypeError');
    expect(copiedInner.code).toBe('ECONNREFUSED');
    const everything = [
      copy.message,
      copy.stack,
      copiedInner.message,
      copiedInner.stack,
      JSON.stringify(copy),
    ].join('\n');
    expect(everything).not.toContain('TOKEN123456');
    expect(everything).not.toContain('KEY-abcdef');
  });
});
