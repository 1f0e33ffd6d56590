/** put-event's event checks: what an event file must give, what is filled in, and the local pattern check. */
import { completeEvent, patternMismatch } from '../../../../bin/commands/put-event';
import { CliError } from '../../../../bin/commands/types';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const defaults = { account: '000000000000', region: 'us-east-1', now: NOW, newId: () => 'generated-id' };

describe('completeEvent', () => {
  it('fills id, version, time, account, region and resources when missing', () => {
    const event = completeEvent(
      { source: 'myapp.orders', 'detail-type': 'Order Paid', detail: { a: 1 } },
      defaults,
    );
    expect(event).toEqual({
      id: 'generated-id',
      version: '0',
      source: 'myapp.orders',
      'detail-type': 'Order Paid',
      account: '000000000000',
      time: NOW.toISOString(),
      region: 'us-east-1',
      resources: [],
      detail: { a: 1 },
    });
  });

  it('keeps the fields the file gives', () => {
    const given = {
      id: 'e-1',
      version: '0',
      source: 's',
      'detail-type': 'd',
      account: '111122223333',
      time: '2024-06-01T12:00:00Z',
      region: 'eu-west-1',
      resources: ['arn:x'],
      detail: {},
    };
    expect(completeEvent(given, defaults)).toEqual(given);
  });

  it.each([
    [[], /JSON object/],
    [{ 'detail-type': 'd', detail: {} }, /"source"/],
    [{ source: 's', detail: {} }, /"detail-type"/],
    [{ source: 's', 'detail-type': 'd' }, /"detail"/],
    [{ source: 's', 'detail-type': 'd', detail: [] }, /"detail"/],
    [{ source: 's', 'detail-type': 'd', detail: {}, time: 'yesterday' }, /"time"/],
    [{ source: 's', 'detail-type': 'd', detail: {}, resources: [1] }, /"resources"/],
  ])('refuses %j', (value, message) => {
    expect(() => completeEvent(value, defaults)).toThrow(CliError);
    expect(() => completeEvent(value, defaults)).toThrow(message);
  });
});

describe('patternMismatch', () => {
  const pattern = {
    source: ['myapp.orders'],
    'detail-type': ['Order Paid'],
    detail: { currency: ['GBP', 'EUR'] },
  };

  it('matches an event whose values are listed', () => {
    expect(
      patternMismatch(pattern, {
        source: 'myapp.orders',
        'detail-type': 'Order Paid',
        detail: { currency: 'GBP' },
      }),
    ).toBeUndefined();
  });

  it('names the first field that does not match', () => {
    expect(patternMismatch(pattern, { source: 'other', 'detail-type': 'Order Paid' })).toMatch(
      /^source is "other"/,
    );
    expect(
      patternMismatch(pattern, {
        source: 'myapp.orders',
        'detail-type': 'Order Paid',
        detail: { currency: 'USD' },
      }),
    ).toMatch(/^detail\.currency is "USD"/);
  });

  it('does not judge content filters it does not evaluate', () => {
    expect(patternMismatch({ source: [{ prefix: 'myapp.' }] }, { source: 'other' })).toBeUndefined();
  });
});
