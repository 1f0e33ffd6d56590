import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';
import { compileExpression } from '../../../functions/config/expressions';
import { evaluateExpression, type PreparedInput, prepareInput } from '../../../functions/mapping/evaluate';
import { isTruthy } from '../../../functions/mapping/mapper';
import { nativeRule, nativeValue, nativeWhen } from '../../../functions/mapping/native-when';

const prepare = (body: unknown, headers: Record<string, string> = {}): PreparedInput => {
  const ready = prepareInput({ body, headers, query: { source: 'crm' }, receivedAt: '2026-11-25T00:00:00Z' });
  if (!ready.ok) throw new Error(ready.problem.message);
  return ready.prepared;
};

const viaJsonata = async (source: string, input: PreparedInput): Promise<boolean> => {
  const outcome = await evaluateExpression(compileExpression(source, 'when'), input);
  if (!outcome.ok) throw new Error(outcome.problem.message);
  return isTruthy(outcome.value);
};

const PR = { action: 'opened', number: 7, pull_request: { state: 'open', merged: false, draft: null } };

describe('nativeWhen: the common `when` rules without JSONata', () => {
  it.each([
    ["action = 'opened'", true],
    ["action != 'opened'", false],
    ["'opened' = action", true],
    ['number = 7', true],
    ["number = '7'", false],
    ["pull_request.state = 'open'", true],
    ['pull_request.merged = false', true],
    ['pull_request.draft = null', true],
    ["pull_request.missing = 'x'", false],
    ["pull_request.missing != 'x'", false],
    ["nothing.at.all = 'x'", false],
    ["$headers.'x-github-event' = 'pull_request'", true],
    ["$query.source = 'crm'", true],
    ["$.action = 'opened'", true],
    ["action = 'opened' and pull_request.merged = true", false],
    ["action = 'closed' or (number = 7)", true],
    ["action='closed' or number=7 and pull_request.state='x'", false],
    ['`action` = "opened"', true],
    ["$contentType = 'application/json'", true],
    ["(\n  action = 'opened'\n)", true],
  ])('decides %s as JSONata does', async (source, expected) => {
    const input = prepare(PR, { 'x-github-event': 'pull_request' });
    expect(nativeWhen(compileExpression(source, 'when'), input)).toBe(expected);
    expect(await viaJsonata(source, input)).toBe(expected);
  });

  it.each([
    "action in ['opened', 'edited']",
    "$lowercase(action) = 'opened'",
    "pull_request[state = 'open'].merged = false",
    'number > 5',
    "action = 'opened' ? true : false",
    'action',
    'number = 3 + 4',
    "action = 'opened' /* note */",
    'action = "a\\nb"',
    "$$.action = 'opened'",
    'number = -1',
    "$headers = 'x'",
  ])('leaves %s to JSONata', (source) => {
    expect(nativeWhen(compileExpression(source, 'when'), prepare(PR))).toBeUndefined();
  });

  it.each([
    "action = 'opened' and",
    "action.true = 'x'",
    '',
    '()',
    "'a' = 'b'",
    'a = b',
    "a = 'x' or or b = 'y'",
  ])('reads no rule from %j', (source) => {
    expect(nativeRule(source)).toBeUndefined();
  });

  it.each([
    ['an array along the path (JSONata maps over it)', { labels: [{ name: 'bug' }] }, "labels.name = 'bug'"],
    ['an array compared', { action: ['opened'] }, "action = 'opened'"],
    ['an object compared', { action: { a: 1 } }, "action != 'x'"],
    ['an inherited property', {}, "toString = 'x'"],
    ['a body that is an array', [{ action: 'opened' }], "action = 'opened'"],
    ['an unknown variable', PR, "$other.action = 'opened'"],
  ])('asks JSONata for %s', (_case, body, source) => {
    expect(nativeWhen(compileExpression(source, 'when'), prepare(body))).toBeUndefined();
  });

  it('agrees with JSONata on random payloads and rules, and decides most of them itself (property)', async () => {
    const key = fc.constantFrom('action', 'state', 'a', 'b', '__proto__', 'constructor', 'toString');
    const scalar = fc.constantFrom<unknown>('opened', 'closed', '', '1', 0, 1, 1.5, true, false, null);
    const body = payloads(key, scalar);
    const literal = fc.constantFrom(
      "'opened'",
      "'closed'",
      "''",
      "'1'",
      '0',
      '1',
      '1.5',
      'true',
      'false',
      'null',
    );
    // Names written plain where they can be, else in backticks; after a dot, sometimes quoted.
    const step = (k: string, first: boolean, quoted: boolean): string =>
      !first && quoted ? `'${k}'` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(k) ? k : `\`${k}\``;
    const field = fc.oneof(
      fc
        .tuple(fc.array(key, { minLength: 1, maxLength: 3 }), fc.boolean())
        .map(([keys, quoted]) => keys.map((k, i) => step(k, i === 0, quoted)).join('.')),
      fc.constantFrom("$headers.'x-event'", '$query.source', '$.`action`', '$ . action', '$contentType'),
    );
    const comparison = fc
      .tuple(field, fc.constantFrom('=', '!='), literal, fc.boolean())
      .map(([f, op, lit, flip]) => (flip ? `${lit} ${op} ${f}` : `${f} ${op} ${lit}`));
    const rule = fc.oneof(
      comparison,
      fc.tuple(comparison, fc.constantFrom('and', 'or'), comparison).map(([l, op, r]) => `${l} ${op} (${r})`),
      // Precedence: `and` binds tighter than `or`, both looser than a comparison.
      fc
        .tuple(comparison, fc.constantFrom('and', 'or'), comparison, fc.constantFrom('and', 'or'), comparison)
        .map(([a, op1, b, op2, c]) => `${a} ${op1} ${b} ${op2} ${c}`),
    );
    let decided = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(body, rule, async (payload, source) => {
        runs += 1;
        const input = prepare(payload, { 'x-event': 'push' });
        const native = nativeWhen(compileExpression(source, 'when'), input);
        if (native === undefined) return;
        decided += 1;
        expect(native).toBe(await viaJsonata(source, input));
      }),
      { numRuns: 500, seed: 20261125 },
    );
    // The shortcut must actually be taken, or this test proves nothing.
    expect(decided).toBeGreaterThan(runs / 2);
  });
});

const toJson = (pairs: ReadonlyArray<readonly [string, unknown]>): string =>
  `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`;

const toObjectText = (pairs: ReadonlyArray<readonly [string, unknown]>): unknown => JSON.parse(toJson(pairs));

/**
 * Random payloads over a few keys and leaves, nested objects and arrays. Objects are built as JSON text and
 * parsed, so a `__proto__` key is an own property, as in a payload.
 */
function payloads(key: fc.Arbitrary<string>, leaf: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const value = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.array(tie('value'), { maxLength: 2 }),
      fc.array(fc.tuple(key, tie('value')), { maxLength: 3 }).map(toObjectText),
    ),
  })).value;
  return fc.array(fc.tuple(key, value), { maxLength: 4 }).map(toObjectText);
}

describe('nativeValue: a plain field without JSONata (a configured deliveryId)', () => {
  it('reads the same value as JSONata, or leaves it to JSONata (property)', async () => {
    const key = fc.constantFrom('id', 'data', 'a', '__proto__', 'constructor');
    const leaf = fc.constantFrom<unknown>('evt_1', '', 7, 0, true, null, 1.5);
    const body = payloads(key, leaf);
    const field = fc.oneof(
      fc.array(key, { minLength: 1, maxLength: 3 }).map((keys) => keys.map((k) => `\`${k}\``).join('.')),
      fc.constantFrom("$headers.'x-request-id'", '$headers.`x-missing`', '$query.source', '$.id'),
    );
    let decided = 0;
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(body, field, async (payload, source) => {
        runs += 1;
        const input = prepare(payload, { 'x-request-id': 'r-1' });
        const compiled = compileExpression(source, 'deliveryId');
        const native = nativeValue(compiled, input);
        if (native === undefined) return;
        decided += 1;
        const outcome = await evaluateExpression(compiled, input);
        expect(outcome).toEqual({ ok: true, value: native.value });
      }),
      { numRuns: 400, seed: 20261125 },
    );
    expect(decided).toBeGreaterThan(runs / 2);
  });

  it('leaves anything but a plain field to JSONata', () => {
    const input = prepare({ id: 'a', data: { id: 'b' } });
    for (const source of ['$string(id)', "id & 'x'", 'data[0].id', "id = 'a'", "'a'", '$']) {
      expect(nativeValue(compileExpression(source, 'deliveryId'), input)).toBeUndefined();
    }
    expect(nativeValue(compileExpression('data.id', 'deliveryId'), input)).toEqual({ value: 'b' });
  });
});

describe('an ingest whose rules are plain comparisons', () => {
  it('decides them, and reads a plain deliveryId field, without loading JSONata at all', () => {
    const root = join(__dirname, '../../..');
    const script = `
      const { compileConfig } = require(${JSON.stringify(join(root, 'functions/config/compile.ts'))});
      const { evaluateRules } = require(${JSON.stringify(join(root, 'functions/mapping/mapper.ts'))});
      const config = compileConfig({
        service: { baseUrl: 'https://docs.example.com', apiKeySecret: 'k' },
        storage: { keyPattern: '{integration}/{jobId}/{filename}' },
        integrations: [{ id: 'gh', verify: { scheme: 'github', secret: 's' },
          deliveryId: '$headers.\`x-github-delivery\`',
          documents: [{ name: 'note', when: "action = 'opened'", template: { id: '1' }, data: { T: 'title' } }] }],
      }, 'inline', undefined, { lazy: true });
      const { resolveDeliveryId } = require(${JSON.stringify(join(root, 'functions/core/delivery-id.ts'))});
      const input = { body: { action: 'opened' }, headers: { 'x-github-delivery': 'd-1' }, query: {}, receivedAt: 'now' };
      const gh = config.integrations.get('gh');
      Promise.all([evaluateRules(gh, input), resolveDeliveryId(gh, input, Buffer.from('{}'))]).then(([rules, id]) => {
        const loaded = Object.keys(require.cache).some((path) => path.includes('/node_modules/jsonata/'));
        console.log(JSON.stringify({ matched: rules.map((r) => r.name), id, loaded }));
      });
    `;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.stderr).not.toMatch(/Error/);
    expect(JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}')).toEqual({
      matched: ['note'],
      id: 'd-1',
      loaded: false,
    });
  });
});
