import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { loadConfigFileSync, parseConfig } from '../../../functions/config/load';
import { resolveDeliveryId, validDeliveryId } from '../../../functions/core/delivery-id';
import { MappingError } from '../../../functions/mapping/errors';

const shipped = loadConfigFileSync(resolve(__dirname, '../../../config/docrelay.yaml'));
const raw = Buffer.from('{"hello":"world"}');
const hash = `sha256:${createHash('sha256').update(raw).digest('hex')}`;
const input = (body: unknown, headers: Record<string, string> = {}) => ({
  body,
  headers,
  query: {},
  receivedAt: '2024-06-01T12:00:00Z',
});

const withScheme = (verify: string, extra = '') =>
  parseConfig(`
service: { baseUrl: https://docs.example.com }
integrations:
  - id: x
    verify: ${verify}
${extra}    documents:
      - name: r
        template: { id: "9003" }
        data: { Title: "'t'" }
`).integrations.get('x')!;

describe('resolveDeliveryId', () => {
  it.each([
    ['github', '{ scheme: github, secret: s }', input({}, { 'x-github-delivery': 'gh-1' }), 'gh-1'],
    ['stripe', '{ scheme: stripe, secret: s }', input({ id: 'evt_1' }), 'evt_1'],
    ['shopify', '{ scheme: shopify, secret: s }', input({}, { 'x-shopify-webhook-id': 'sh-1' }), 'sh-1'],
    [
      'standard-webhooks',
      '{ scheme: standard-webhooks, secret: s }',
      input({}, { 'webhook-id': 'msg_1' }),
      'msg_1',
    ],
    ['slack', '{ scheme: slack, secret: s }', input({ event_id: 'Ev1' }), 'Ev1'],
    ['token', '{ scheme: token, secret: s }', input({ id: 'ignored' }), hash],
    ['hmac-sha256', '{ scheme: hmac-sha256, secret: s, header: x-sig }', input({}), hash],
    ['none', '{ scheme: none, allowUnsigned: true }', input({ id: 'ignored' }), hash],
  ])('takes the %s default', async (_scheme, verify, delivery, expected) => {
    await expect(resolveDeliveryId(withScheme(verify), delivery, raw)).resolves.toBe(expected);
  });

  it('falls back to the body hash when the default is missing', async () => {
    await expect(
      resolveDeliveryId(withScheme('{ scheme: github, secret: s }'), input({}), raw),
    ).resolves.toBe(hash);
    await expect(
      resolveDeliveryId(withScheme('{ scheme: slack, secret: s }'), input({ type: 'url_verification' }), raw),
    ).resolves.toBe(hash);
  });

  it('evaluates a configured expression, with the shipped GitHub config', async () => {
    const github = shipped.integrations.get('github-releases')!;
    await expect(resolveDeliveryId(github, input({}, { 'x-github-delivery': 'abc' }), raw)).resolves.toBe(
      'abc',
    );
    const custom = withScheme('{ scheme: token, secret: s }', '    deliveryId: "order.id"\n');
    await expect(resolveDeliveryId(custom, input({ order: { id: 42 } }), raw)).resolves.toBe('42');
    await expect(resolveDeliveryId(custom, input({ order: {} }), raw)).resolves.toBe(hash);
  });

  it('falls back to the body hash for an id above 2^53, so two such ids never share a key', async () => {
    const custom = withScheme('{ scheme: token, secret: s }', '    deliveryId: "order.id"\n');
    const bodies = ['{"order":{"id":12345678901234567890}}', '{"order":{"id":12345678901234567891}}'];
    const [a, b] = bodies.map((text) => JSON.parse(text) as { order: { id: number } });
    expect(a?.order.id).toBe(b?.order.id); // the collision the fallback avoids
    const ids = await Promise.all(
      bodies.map((text) => resolveDeliveryId(custom, input(JSON.parse(text)), Buffer.from(text))),
    );
    expect(ids[0]).toMatch(/^sha256:/);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it('throws a MappingError when the expression fails', async () => {
    const custom = withScheme('{ scheme: token, secret: s }', '    deliveryId: "order.id + 1"\n');
    await expect(resolveDeliveryId(custom, input({ order: { id: 'x' } }), raw)).rejects.toBeInstanceOf(
      MappingError,
    );
  });

  it("uses an EventBridge event's id", async () => {
    const events = shipped.integrations.get('order-events')!;
    await expect(resolveDeliveryId(events, input({ id: 'ev-1', detail: {} }), raw, 'event')).resolves.toBe(
      'ev-1',
    );
  });

  it.each([
    ['a string', 'abc', 'abc'],
    ['a trimmed string', '  abc ', 'abc'],
    ['a number', 42, '42'],
    ['an empty string', '', undefined],
    ['too long', 'x'.repeat(257), undefined],
    ['the longest allowed', 'x'.repeat(256), 'x'.repeat(256)],
    ['control characters', 'a\nb', undefined],
    ['an object', { id: 1 }, undefined],
    ['NaN', Number.NaN, undefined],
    ['the largest safe integer', 2 ** 53 - 1, '9007199254740991'],
    ['a negative safe integer', -7, '-7'],
    ['an unsafe integer (above 2^53, digits already lost)', 2 ** 53 + 2, undefined],
    ['a fraction', 1.5, undefined],
  ])('validates %s', (_what, value, expected) => {
    expect(validDeliveryId(value)).toBe(expected);
  });
});
