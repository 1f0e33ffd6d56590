import fc from 'fast-check';
import type { CompiledIntegration } from '../../../functions/config/compile';
import type { ExpressionLimits } from '../../../functions/config/expressions';
import { parseConfig } from '../../../functions/config/load';
import type { Template } from '../../../functions/docgen/types';
import { MappingError } from '../../../functions/mapping/errors';
import { evaluateRules, mapDelivery } from '../../../functions/mapping/mapper';

const everyType: Template = {
  id: '7001',
  name: 'Every type',
  createdDateTime: '2024-01-01T00:00:00Z',
  files: [
    {
      id: '70011',
      filename: 'x.docx',
      mimeType: 'application/octet-stream',
      size: 1,
      createdDateTime: '2024-01-01T00:00:00Z',
      lastModifiedDateTime: '2024-01-01T00:00:00Z',
      usedProperties: [{ name: 'T', required: true }],
    },
  ],
  properties: [
    { type: 'text', name: 'T' },
    { type: 'date', name: 'D' },
    { type: 'number', name: 'N' },
    { type: 'integer', name: 'I' },
    { type: 'boolean', name: 'B' },
    { type: 'select', name: 'S', allowedValues: ['a', 'b'] },
    { type: 'object', name: 'O' },
    { type: 'mystery', name: 'U' },
    { type: 'text', name: 'M', multipleValues: true },
  ],
};
const templates = { getTemplate: async () => everyType };

const integrationWith = (data: string, when = '', limits?: ExpressionLimits): CompiledIntegration =>
  parseConfig(
    `
service: { baseUrl: https://docs.example.com }
integrations:
  - id: x
    verify: { scheme: github, secret: s }
    documents:
      - name: r
        ${when}
        template: { id: "7001" }
        data:
${data}`,
    'test.yaml',
    { limits },
  ).integrations.get('x')!;

const input = (body: unknown) => ({ body, headers: {}, query: {}, receivedAt: '2024-06-01T12:00:00Z' });

async function mappingError(promise: Promise<unknown>): Promise<MappingError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof MappingError) return error;
    throw error;
  }
  throw new Error('expected a MappingError');
}

/** Object.prototype's own keys, to prove nothing was added. */
const prototypeKeys = () => Object.getOwnPropertyNames(Object.prototype).sort();
const cleanPrototype = prototypeKeys();
const assertPrototypeClean = () => {
  expect(prototypeKeys()).toEqual(cleanPrototype);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
};

describe('time and depth bounds', () => {
  it('stops an endless (tail-recursive) loop with MAPPING_TIMEOUT', async () => {
    const loop = integrationWith('          T: "($f := function($n) { $f($n + 1) }; $f(0))"', '', {
      timeoutMs: 100,
    });
    const started = Date.now();
    const error = await mappingError(mapDelivery(loop, input({}), templates));
    expect(error.code).toBe('MAPPING_TIMEOUT');
    expect(error.retryable).toBe(false);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('stops an endless loop with the default budget of about a second', async () => {
    const loop = integrationWith('          T: "($f := function($n) { $f($n + 1) }; $f(0))"');
    const started = Date.now();
    await expect(mapDelivery(loop, input({}), templates)).rejects.toMatchObject({ code: 'MAPPING_TIMEOUT' });
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(3000);
  });

  it('stops unbounded recursion with MAPPING_TOO_DEEP', async () => {
    const deep = integrationWith('          T: "($f := function($n) { 1 + $f($n + 1) }; $f(0))"');
    const error = await mappingError(mapDelivery(deep, input({}), templates));
    expect(error.code).toBe('MAPPING_TOO_DEEP');
  });

  it('stops at the first fatal problem instead of spending the budget on every property and rule', async () => {
    const loop = integrationWith(
      ['T: "($f := function($n) { $f($n + 1) }; $f(0))"', 'M: "($f := function($n) { $f($n + 1) }; $f(0))"']
        .map((l) => `          ${l}`)
        .join('\n'),
      '',
      { timeoutMs: 50 },
    );
    const error = await mappingError(mapDelivery(loop, input({}), templates));
    expect(error.problems).toHaveLength(1);
  });

  it('bounds a `when` too, on the ingest path', async () => {
    const loop = integrationWith('          T: "a"', 'when: "($f := function($n) { $f($n + 1) }; $f(0))"', {
      timeoutMs: 50,
    });
    await expect(evaluateRules(loop, input({}))).rejects.toMatchObject({ code: 'MAPPING_TIMEOUT' });
  });

  it('refuses a huge range with MAPPING_TOO_LARGE', async () => {
    const big = integrationWith('          N: "$count([1..100000000])"\n          T: "a"');
    await expect(mapDelivery(big, input({ a: 'x' }), templates)).rejects.toMatchObject({
      code: 'MAPPING_TOO_LARGE',
    });
  });

  it('refuses a payload nested deeper than 200 levels without overflowing the stack', async () => {
    let body: unknown = { end: true };
    for (let i = 0; i < 100_000; i++) body = { a: body };
    const descend = integrationWith('          T: "$string(**.end)"');
    const error = await mappingError(mapDelivery(descend, input(body), templates));
    expect(error.code).toBe('MAPPING_TOO_DEEP');
    expect(error.message).toContain('nests deeper than 200 levels');
  });

  it('maps a reasonably nested payload with the descendant operator', async () => {
    let body: unknown = { end: 'found' };
    for (let i = 0; i < 150; i++) body = { a: body };
    const descend = integrationWith('          T: "**.end"');
    const [document] = await mapDelivery(descend, input(body), templates);
    expect(document?.data).toEqual({ T: 'found' });
  });
});

describe('prototype pollution', () => {
  const hostile = () =>
    JSON.parse(
      '{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "yes"}}, "prototype": {"polluted": 1}, "a": {"__proto__": {"polluted": true}}}',
    ) as unknown;

  it('maps __proto__, constructor and prototype keys as plain data, leaving Object.prototype untouched', async () => {
    const mapping = integrationWith(
      [
        'T: "$string(`__proto__`)"',
        'O: "$"',
        'U: "$merge([{}, `__proto__`, a])"',
        'M: "$keys($)"',
        "S: \"constructor.prototype.polluted ? 'a' : 'b'\"",
      ]
        .map((l) => `          ${l}`)
        .join('\n'),
    );
    const [document] = await mapDelivery(mapping, input(hostile()), templates);
    assertPrototypeClean();
    const data = document!.data;
    expect(Object.getPrototypeOf(data)).toBe(Object.prototype);
    expect(data.T).toBe('{"polluted":"yes"}');
    expect(data.M).toEqual(['__proto__', 'constructor', 'prototype', 'a']);
    const object = data.O as Record<string, unknown>;
    // An own data property named __proto__, not a changed prototype.
    expect(Object.getPrototypeOf(object)).toBe(Object.prototype);
    expect(Object.hasOwn(object, '__proto__')).toBe(true);
    expect(JSON.stringify(object)).toContain('"__proto__":{"polluted":"yes"}');
    expect(Object.getPrototypeOf(data.U)).toBe(Object.prototype);
  });

  it('does not let $headers or $query keys named __proto__ change their objects', async () => {
    const mapping = integrationWith('          T: "$string($headers.polluted) & $string($query.polluted)"');
    const headers = JSON.parse('{"__proto__": "x"}') as Record<string, string>;
    const query = JSON.parse('{"__proto__": "y"}') as Record<string, string>;
    const [document] = await mapDelivery(mapping, { ...input({}), headers, query }, templates);
    expect(document?.data.T).toBe('');
    assertPrototypeClean();
  });
});

describe('arbitrary payloads (property-based)', () => {
  // JSON values whose objects may carry the keys prototype pollution relies on, built as JSON.parse does.
  const key = fc.oneof(
    fc.string({ maxLength: 8 }),
    fc.constantFrom('__proto__', 'constructor', 'prototype', 'a', 'b'),
  );
  const { json } = fc.letrec((tie) => ({
    json: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null),
      fc.boolean(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer(),
      fc.string({ maxLength: 20 }),
      fc.constantFrom('2024-05-31', '1719763200', 'true', '12.5', 'a', 'b', ''),
      fc.array(tie('json'), { maxLength: 5 }),
      fc.array(fc.tuple(key, tie('json')), { maxLength: 5 }).map((entries) => {
        const object: Record<string, unknown> = {};
        for (const [k, v] of entries) {
          Object.defineProperty(object, k, {
            value: v,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        return object;
      }),
    ),
  }));

  const mapping = integrationWith(
    [
      'T: "$type($)"',
      'D: "b"',
      'N: "$count(**)"',
      'I: "$count(*)"',
      'B: "$boolean(b)"',
      "S: \"$exists(a) ? 'a' : 'b'\"",
      'O: "$type($) = \'object\' ? $ : {}"',
      'U: "$merge([{}, `__proto__`, $.constructor])"',
      'M: "**.a"',
    ]
      .map((l) => `          ${l}`)
      .join('\n'),
    'when: "$not($exists(skip))"',
  );

  it('never crashes the mapper: every payload maps or fails with a MappingError, and pollutes nothing', async () => {
    const outcomes = { mapped: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(json, async (body) => {
        try {
          const documents = await mapDelivery(mapping, input(body), templates);
          for (const document of documents) {
            expect(() => JSON.stringify(document)).not.toThrow();
            expect(Object.getPrototypeOf(document.data)).toBe(Object.prototype);
          }
          outcomes.mapped++;
        } catch (error) {
          if (!(error instanceof MappingError)) throw error;
          expect(error.problems.length).toBeGreaterThan(0);
          expect(error.message).not.toContain('\n');
          outcomes.refused++;
        }
        assertPrototypeClean();
      }),
      { numRuns: 300, seed: 20261126 },
    );
    // Both paths must have been exercised, or the property proves little.
    expect(outcomes.mapped).toBeGreaterThan(10);
    expect(outcomes.refused).toBeGreaterThan(10);
  });
});
