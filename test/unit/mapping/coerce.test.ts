import type { TemplateProperty } from '../../../functions/docgen/types';
import { coerceValue } from '../../../functions/mapping/coerce';
import type { JsonValue } from '../../../functions/mapping/evaluate';

const prop = (type: string, extra: Partial<TemplateProperty> = {}): TemplateProperty => ({
  type,
  name: 'P',
  ...extra,
});
const value = (v: JsonValue) => ({ kind: 'value', value: v });
const absent = { kind: 'absent' };
const refused = (pattern: RegExp) =>
  expect.objectContaining({ kind: 'error', message: expect.stringMatching(pattern) });

describe('coerceValue', () => {
  it.each<[string, JsonValue, unknown]>([
    ['a string', 'Jenny', value('Jenny')],
    ['an empty string', '', value('')],
    ['a number', 12.5, value('12.5')],
    ['a boolean', true, value('true')],
    ['null', null, absent],
    ['an array', ['a', 'b'], refused(/expected text, got a list of 2 \(use \$join/)],
    ['an object', { a: 1 }, refused(/expected text, got an object/)],
  ])('text: %s', (_what, input, expected) => {
    expect(coerceValue(prop('text'), input)).toEqual(expected);
    expect(coerceValue(prop('string'), input)).toEqual(expected);
  });

  it.each<[string, JsonValue, unknown]>([
    ['a date', '2024-05-31', value('2024-05-31')],
    ['a UTC timestamp', '2019-05-15T15:20:53Z', value('2019-05-15')],
    ['a timestamp with offset, as written', '2024-05-31T23:30:00-05:00', value('2024-05-31')],
    ['a timestamp with fraction', '2024-05-31T23:30:00.123+02:00', value('2024-05-31')],
    ['a space-separated timestamp', '2024-05-31 08:00:00', value('2024-05-31')],
    ['epoch seconds', 1719763200, value('2024-06-30')],
    ['epoch milliseconds', 1719763200000, value('2024-06-30')],
    ['epoch seconds as a string', '1719763200', value('2024-06-30')],
    ['epoch milliseconds as a string', '1719763200000', value('2024-06-30')],
    ['epoch zero', 0, value('1970-01-01')],
    ['null', null, absent],
    ['an empty string', '', absent],
    ['an impossible date', '2024-02-30', refused(/not a valid date/)],
    ['an impossible time', '2024-02-01T25:00:00Z', refused(/not a valid date/)],
    ['free text', 'tomorrow', refused(/cannot read "tomorrow" as a date/)],
    ['a US date', '05/31/2024', refused(/expected YYYY-MM-DD/)],
    ['a boolean', true, refused(/expected a date/)],
    ['a huge number', 1e20, refused(/outside the range/)],
  ])('date: %s', (_what, input, expected) => {
    expect(coerceValue(prop('date'), input)).toEqual(expected);
  });

  it.each<[string, JsonValue, unknown]>([
    ['a number', 129.5, value(129.5)],
    ['a numeric string', '199.00', value(199)],
    ['a signed exponent string', ' -1.5e2 ', value(-150)],
    ['an empty string', '', absent],
    ['NaN as text', 'NaN', refused(/expected a number, got "NaN"/)],
    ['Infinity as text', 'Infinity', refused(/expected a number/)],
    ['a huge exponent', '1e999', refused(/not finite/)],
    ['text', '12 EUR', refused(/expected a number/)],
    ['hex', '0x10', refused(/expected a number/)],
    ['a boolean', true, refused(/expected a number/)],
    ['an array', [1], refused(/expected a number, got a list of 1/)],
  ])('number: %s', (_what, input, expected) => {
    expect(coerceValue(prop('number'), input)).toEqual(expected);
  });

  it.each<[string, JsonValue, unknown]>([
    ['an integer', 42, value(42)],
    ['an integer string', '42', value(42)],
    ['a whole float string', '42.0', value(42)],
    ['a fraction', 4.2, refused(/expected an integer, got 4.2 \(use \$round/)],
  ])('integer: %s', (_what, input, expected) => {
    expect(coerceValue(prop('integer'), input)).toEqual(expected);
  });

  it.each<[string, JsonValue, unknown]>([
    ['true', true, value(true)],
    ['false', false, value(false)],
    ['"true"', 'true', value(true)],
    ['"FALSE"', 'FALSE', value(false)],
    ['1', 1, value(true)],
    ['0', 0, value(false)],
    ['"1"', '1', value(true)],
    ['"0"', '0', value(false)],
    ['""', '', absent],
    ['"yes"', 'yes', refused(/expected a boolean/)],
    ['2', 2, refused(/expected a boolean/)],
  ])('boolean: %s', (_what, input, expected) => {
    expect(coerceValue(prop('boolean'), input)).toEqual(expected);
  });

  it.each<[string, TemplateProperty, JsonValue, unknown]>([
    ['an allowed value', prop('select', { allowedValues: ['EUR', 'USD'] }), 'USD', value('USD')],
    ['a number matching an allowed value', prop('select', { allowedValues: ['1', '2'] }), 2, value('2')],
    [
      'an unknown value, with a default',
      prop('select', { allowedValues: ['EUR', 'USD'], defaultValue: 'EUR' }),
      'JPY',
      value('EUR'),
    ],
    [
      'an unknown value, without default',
      prop('select', { allowedValues: ['EUR', 'USD'] }),
      'eur',
      refused(/"eur" is not one of the allowed values "EUR", "USD"/),
    ],
    ['any value when no allowedValues are given', prop('select'), 'x', value('x')],
    ['an object', prop('select', { allowedValues: ['a'] }), { a: 1 }, refused(/allowed values/)],
    ['an empty string', prop('select', { allowedValues: ['a'] }), '', absent],
  ])('select: %s', (_what, property, input, expected) => {
    expect(coerceValue(property, input)).toEqual(expected);
  });

  it.each<[string, JsonValue, unknown]>([
    ['an object', { a: [1, 2] }, value({ a: [1, 2] })],
    ['an array', [1], refused(/expected an object/)],
    ['a string', 'x', refused(/expected an object/)],
  ])('object: %s', (_what, input, expected) => {
    expect(coerceValue(prop('object'), input)).toEqual(expected);
  });

  it('passes values of unknown types through untouched', () => {
    expect(coerceValue(prop('signature'), { svg: '<svg/>' })).toEqual(value({ svg: '<svg/>' }));
    expect(coerceValue(prop('rich-text'), 5)).toEqual(value(5));
  });

  it('coerces multipleValues element-wise, wrapping a single value and naming a bad element', () => {
    const dates = prop('date', { multipleValues: true });
    expect(coerceValue(dates, [1719763200, '2024-01-02T10:00:00Z', null])).toEqual(
      value(['2024-06-30', '2024-01-02']),
    );
    expect(coerceValue(dates, '2024-01-02')).toEqual(value(['2024-01-02']));
    expect(coerceValue(dates, [])).toEqual(value([]));
    expect(coerceValue(dates, ['2024-01-02', 'soon'])).toEqual({
      kind: 'error',
      index: 1,
      message: expect.stringMatching(/cannot read "soon"/),
    });
  });
});
