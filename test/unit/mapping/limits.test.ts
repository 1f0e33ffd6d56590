import { compileExpression, deferExpression } from '../../../functions/config/expressions';
import { MAPPING_ISOLATE_FILE } from '../../../functions/config/lambda-env';
import { parseConfig } from '../../../functions/config/load';
import type { Template } from '../../../functions/docgen/types';
import { MAX_COLLECTION_ITEMS } from '../../../functions/mapping/builtins';
import { MappingError } from '../../../functions/mapping/errors';
import { evaluateAll, prepareInput } from '../../../functions/mapping/evaluate';
import {
  bundledThreadScript,
  createMappingIsolate,
  type MappingIsolate,
} from '../../../functions/mapping/isolate';
import { mapRule } from '../../../functions/mapping/mapper';

const template: Template = {
  id: '7001',
  name: 'Limits',
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
    { type: 'text', name: 'M', multipleValues: true },
  ],
};

const ruleWith = (data: Record<string, string>, limits?: { timeoutMs?: number }) =>
  parseConfig(
    `
service: { baseUrl: https://docs.example.com }
integrations:
  - id: x
    verify: { scheme: github, secret: s }
    documents:
      - name: r
        template: { id: "7001" }
        data:
${Object.entries(data)
  .map(([k, v]) => `          ${k}: ${JSON.stringify(v)}`)
  .join('\n')}`,
    'test.yaml',
    { limits },
  ).integrations.get('x')!.rules[0]!;

const input = (body: unknown) => ({ body, headers: {}, query: {}, receivedAt: '2024-06-01T12:00:00Z' });

/** About 1 MB of line items with repeating SKUs. */
const bigOrder = {
  name: 'order 1',
  width: 300_000_000,
  items: Array.from({ length: 60_000 }, (_, i) => ({ sku: `SKU-${(i * 7919) % 30_000}` })),
};

async function mappingError(promise: Promise<unknown>): Promise<MappingError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof MappingError) return error;
    throw error;
  }
  throw new Error('expected a MappingError');
}

describe('bounded built-ins, in process', () => {
  const evaluate = async (source: string, body: unknown = bigOrder) => {
    const ready = prepareInput(input(body));
    if (!ready.ok) throw new Error('unprepared');
    // The limits asserted here are sizes, not time: a generous timeout keeps a loaded machine from answering
    // MAPPING_TIMEOUT first.
    const [outcome] = await evaluateAll(
      [compileExpression(source, 'data.T', { timeoutMs: 120_000 })],
      ready.prepared,
    );
    return outcome;
  };

  it.each([
    ['$pad with a width from the payload', '$pad(name, width)'],
    ['$pad with a literal width of 300,000,000', '$pad(name, 300000000)'],
    ['$sort over 60,000 items', '$sort(items.sku)'],
    ['$sort with a comparator over 60,000 items', '$sort(items.sku, function($a, $b) { $a > $b })'],
    ['$distinct over a 1 MB payload', '$distinct(items.sku)'],
    ['$join of a string grown past the limit', '$join([$pad("", 8000000), $pad("", 8000000)])'],
    ['$replace that multiplies its input', '$replace($pad("", 100000, "a"), "a", $pad("", 1000, "b"))'],
    [
      '$string of a tree of shared subtrees',
      '($f := function($a, $n) { $n = 0 ? $a : $f([$a, $a], $n - 1) }; $string($f([1], 40)))',
    ],
  ])('refuses %s with MAPPING_TOO_LARGE before doing the work', async (_what, source) => {
    expect(await evaluate(source)).toMatchObject({ ok: false, problem: { code: 'MAPPING_TOO_LARGE' } });
  });

  it('refuses a result of shared subtrees that would be exponential to copy', async () => {
    const outcome = await evaluate(
      '($f := function($a, $n) { $n = 0 ? $a : $f([$a, $a], $n - 1) }; $f([1], 40))',
    );
    expect(outcome).toMatchObject({ ok: false, problem: { code: 'MAPPING_TOO_LARGE' } });
  });

  it('bounds an expression compiled on first use (the bundled config) as one compiled at load', async () => {
    const ready = prepareInput(input(bigOrder));
    if (!ready.ok) throw new Error('unprepared');
    const deferred = deferExpression('$pad(name, 300000000)', 'data.T', { timeoutMs: 120_000 });
    expect(deferred.limits.timeoutMs).toBe(120_000);
    const [outcome] = await evaluateAll([deferred], ready.prepared);
    expect(outcome).toMatchObject({ ok: false, problem: { code: 'MAPPING_TOO_LARGE' } });
    expect(deferred.expression).toBe(deferred.expression);
  });

  it('refuses $eval at run time too', async () => {
    const outcome = await evaluate('$eval("1 + 1")');
    expect(outcome).toMatchObject({ ok: false, problem: { code: 'MAPPING_EXPRESSION_FAILED' } });
  });

  it.each([
    ['$pad right', '$pad("ab", 5)', 'ab   '],
    ['$pad left with a multi-character pad', '$pad("ab", -7, "xy")', 'xyxyxab'],
    ['$pad with code points', '$pad("é😀", 4, "😀")', 'é😀😀😀'],
    ['$sort of numbers', '$sort([3, 1, 2])', [1, 2, 3]],
    [
      '$sort with a comparator, stable',
      '$sort([{"k":1,"v":"a"},{"k":0,"v":"b"},{"k":1,"v":"c"}], function($l, $r) { $l.k > $r.k }).v',
      ['b', 'a', 'c'],
    ],
    [
      '$distinct of values and objects',
      '$distinct([1, "1", 1, {"a":1,"b":2}, {"b":2,"a":1}])',
      [1, '1', { a: 1, b: 2 }],
    ],
    ['$distinct of one value', '$distinct("a")', 'a'],
    ['$string', '$string({"a": [1, 2]})', '{"a":[1,2]}'],
    ['$join', '$join(["a", "b"], "-")', 'a-b'],
    ['$replace', '$replace("a-b-c", "-", "+", 1)', 'a+b-c'],
  ])('keeps jsonata semantics: %s', async (_what, source, expected) => {
    expect(await evaluate(source, {})).toEqual({ ok: true, value: expected });
  });

  it('refuses the D3070 case as jsonata does', async () => {
    expect(await evaluate('$sort([1, "a"])', {})).toMatchObject({
      ok: false,
      problem: { code: 'MAPPING_EXPRESSION_FAILED', message: expect.stringContaining('D3070') },
    });
  });

  it(`sorts and dedupes up to ${MAX_COLLECTION_ITEMS} items`, async () => {
    const items = Array.from({ length: MAX_COLLECTION_ITEMS }, (_, i) => ({ sku: `S${(i * 7919) % 5000}` }));
    const sorted = await evaluate('$sort(items.sku)', { items });
    const unique = await evaluate('$count($distinct(items.sku))', { items });
    expect(sorted).toMatchObject({ ok: true, value: expect.any(Array) });
    expect(sorted?.ok === true && (sorted.value as unknown[]).length).toBe(MAX_COLLECTION_ITEMS);
    expect(unique).toEqual({ ok: true, value: 5000 });
  });
});

describe('the isolate', () => {
  let isolate: MappingIsolate;
  afterEach(async () => {
    await isolate.close();
  });

  const normal = ruleWith({ T: 'name', M: 'items[1].sku' });

  it.each([
    ['$pad(name, 300000000)', { T: '$pad(name, 300000000)' }],
    ['$sort over 60,000 items', { T: '$join($sort(items.sku))' }],
    ['$distinct over a 1 MB payload', { T: '$join($distinct(items.sku))' }],
    ['deep recursion', { T: '($f := function($n) { 1 + $f($n + 1) }; $string($f(0)))' }],
  ])('ends %s with a MappingError, then maps a normal rule', async (_what, data) => {
    isolate = createMappingIsolate({ size: 1 });
    const error = await mappingError(mapRule(ruleWith(data), input(bigOrder), template, { isolate }));
    expect(['MAPPING_TOO_LARGE', 'MAPPING_TOO_DEEP']).toContain(error.code);
    expect(error.retryable).toBe(false);
    const document = await mapRule(normal, input(bigOrder), template, { isolate });
    expect(document.data).toEqual({ T: 'order 1', M: ['SKU-7919'] });
  });

  it('kills a thread that outlives its deadline, answers MAPPING_TIMEOUT, and replaces the thread', async () => {
    const timers: Array<() => void> = [];
    isolate = createMappingIsolate({
      size: 1,
      setTimer: (callback) => timers.push(callback),
      clearTimer: () => undefined,
    });
    // jsonata's own limit is an hour here: only the kill timer can end this one.
    const endless = ruleWith({ T: '($f := function($n) { $f($n + 1) }; $f(0))' }, { timeoutMs: 3_600_000 });
    const pending = mapRule(endless, input({}), template, { isolate });
    while (timers.length === 0) await new Promise((resolve) => setImmediate(resolve));
    timers[0]?.();
    const error = await mappingError(pending);
    expect(error.code).toBe('MAPPING_TIMEOUT');
    expect(error.message).toContain('hard limit');
    const document = await mapRule(normal, input(bigOrder), template, { isolate });
    expect(document.data.T).toBe('order 1');
  });

  it('answers MAPPING_TOO_LARGE when a thread runs out of heap (the order-by operator cannot be capped)', async () => {
    isolate = createMappingIsolate({ size: 1, maxOldGenerationSizeMb: 48 });
    const orderBy = ruleWith({ T: '$join(items^(sku).sku)' }, { timeoutMs: 3_600_000 });
    const error = await mappingError(mapRule(orderBy, input(bigOrder), template, { isolate }));
    expect(error.code).toBe('MAPPING_TOO_LARGE');
    expect(error.message).toContain('memory');
    await expect(mapRule(normal, input({ name: 'next' }), template, { isolate })).resolves.toMatchObject({
      data: { T: 'next' },
    });
    // Filling a 48 MB heap takes seconds on a loaded machine; the outcome, not the time, is asserted.
  }, 60_000);

  it('serves requests side by side and queues the rest', async () => {
    isolate = createMappingIsolate({ size: 2 });
    const names = Array.from({ length: 6 }, (_, i) => `n${i}`);
    const documents = await Promise.all(
      names.map((name) => mapRule(normal, input({ name, items: [] }), template, { isolate })),
    );
    expect(documents.map((d) => d.data.T)).toEqual(names);
  });
});

describe('the script an isolate thread runs', () => {
  it('is the isolate bundle beside a bundled module, the bundle itself without one, nothing from sources', () => {
    const asked: string[] = [];
    const exists = (answer: boolean) => (path: string) => {
      asked.push(path);
      return answer;
    };
    expect(bundledThreadScript('/var/task/index.js', exists(true))).toBe(`/var/task/${MAPPING_ISOLATE_FILE}`);
    expect(bundledThreadScript('/var/task/index.js', exists(false))).toBe('/var/task/index.js');
    expect(bundledThreadScript('/repo/functions/mapping/isolate.ts', exists(true))).toBeUndefined();
    expect(asked).toEqual([`/var/task/${MAPPING_ISOLATE_FILE}`, `/var/task/${MAPPING_ISOLATE_FILE}`]);
  });
});
