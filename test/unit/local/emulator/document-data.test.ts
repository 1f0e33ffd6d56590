import { checkDocumentData, systemEntries } from '../../../../local/emulator/document-data';
import { EmulatorHttpError } from '../../../../local/emulator/errors';
import {
  loadTemplatesDir,
  type StoredTemplate,
  sampleTemplatesDir,
} from '../../../../local/emulator/template-store';

describe('document data', () => {
  let invoice: StoredTemplate;
  beforeAll(async () => {
    const samples = await loadTemplatesDir(sampleTemplatesDir);
    const found = samples.find((t) => t.id === '9001');
    if (found === undefined) throw new Error('no invoice');
    invoice = found;
  });
  const check = (data: unknown, enforceRequired = true) => {
    const file = invoice.files[0];
    if (file === undefined) throw new Error('no file');
    return checkDocumentData(invoice, file, { data }, enforceRequired);
  };
  const required = { 'Customer Name': 'Ada', 'Invoice Number': 'INV-1' };
  const rejection = (data: unknown): string => {
    try {
      check(data);
    } catch (error) {
      if (error instanceof EmulatorHttpError && error.status === 400) return error.message;
      throw error;
    }
    throw new Error('accepted');
  };

  it('turns typed values into text and applies select defaults', () => {
    const { renderValues, clientData } = check({
      ...required,
      Amount: 12.5,
      Paid: false,
      'Due Date': '2024-02-29',
    });
    expect(renderValues).toEqual({
      ...required,
      Amount: '12.5',
      Paid: 'false',
      'Due Date': '2024-02-29',
      Currency: 'EUR',
    });
    expect(clientData).not.toHaveProperty('Currency');
  });

  it('passes unknown keys through in the client data', () => {
    expect(check({ ...required, Extra: { a: 1 } }).clientData).toHaveProperty('Extra', { a: 1 });
  });

  it.each([
    [{ Amount: '12.5' }, /"Amount" \(number\) expects a JSON number/],
    [{ Paid: 'yes' }, /"Paid" \(boolean\)/],
    [{ 'Due Date': '2024-02-30' }, /"Due Date" \(date\) expects a date as YYYY-MM-DD/],
    [{ 'Due Date': '2024-02-01T00:00:00Z' }, /"Due Date"/],
    [{ Currency: 'JPY' }, /"Currency" \(select\) expects one of "EUR", "USD", "GBP"/],
    [{ 'Customer Name': ['x'] }, /"Customer Name" \(text\)/],
  ])('rejects %j naming the property', (bad, message) => {
    expect(rejection({ ...required, ...bad })).toMatch(message);
  });

  it('rejects a missing required value, naming the property and the file', () => {
    expect(rejection({ 'Customer Name': 'Ada' })).toMatch(/required property "Invoice Number" of file 90011/);
    expect(() => check({}, false)).not.toThrow();
  });

  it.each([[null], [[1]], ['text']])('rejects data %j that is not an object', (data) => {
    expect(rejection(data)).toMatch(/"data" is required and must be a JSON object/);
  });

  it('adds the system entries, keeping a client Title', () => {
    const now = new Date('2024-06-01T10:00:00Z');
    const entries = systemEntries({
      automaticNumber: 3,
      now,
      template: invoice,
      workspace: { id: 'w', displayName: 'Acme' },
      clientData: { Title: 'Mine', Subject: 7 },
    });
    expect(entries).toEqual({
      AutomaticNumber: 3,
      CreatedOn: '2024-06-01T10:00:00.000Z',
      DocumentDate: '2024-06-01T10:00:00.000Z',
      Title: 'Mine',
      Template: '9001',
      Organization: 'Acme',
      Description: null,
      Keywords: null,
      Subject: null,
    });
  });
});

describe('document data of every property type (template 9005)', () => {
  let order: StoredTemplate;
  beforeAll(async () => {
    const samples = await loadTemplatesDir(sampleTemplatesDir);
    const found = samples.find((t) => t.id === '9005');
    if (found === undefined) throw new Error('no order summary');
    order = found;
  });
  const check = (data: Record<string, unknown>) => {
    const file = order.files[0];
    if (file === undefined) throw new Error('no file');
    return checkDocumentData(order, file, { data: { 'Order Id': 'A-1', Quantity: 2, ...data } }, true);
  };

  it('declares string, text, integer, number, boolean, date, select, object and two multi-valued properties', () => {
    expect(order.properties.map((p) => [p.name, p.type, p.multipleValues ?? false])).toEqual([
      ['Order Id', 'string', false],
      ['Customer', 'text', false],
      ['Quantity', 'integer', false],
      ['Unit Price', 'number', false],
      ['Gift Wrap', 'boolean', false],
      ['Order Date', 'date', false],
      ['Priority', 'select', false],
      ['Ship To', 'object', false],
      ['Items', 'string', true],
      ['Lot Numbers', 'integer', true],
    ]);
  });

  it('renders an object as its JSON text and multiple values joined', () => {
    const { renderValues } = check({
      'Ship To': { city: 'Oslo', zip: '0150' },
      Items: ['pen', 'ink'],
      'Lot Numbers': [7, 9],
    });
    expect(renderValues).toMatchObject({
      'Ship To': '{"city":"Oslo","zip":"0150"}',
      Items: 'pen, ink',
      'Lot Numbers': '7, 9',
      Quantity: '2',
    });
  });

  it.each([
    [{ 'Ship To': 'Oslo' }, /"Ship To" \(object\) expects a JSON object/],
    [{ 'Ship To': [1] }, /"Ship To" \(object\) expects a JSON object/],
    [{ Items: 'pen' }, /"Items" \(string, multiple values\) expects a JSON array/],
    [{ 'Lot Numbers': [7, 1.5] }, /"Lot Numbers" \(integer\) expects a JSON integer/],
    [{ Quantity: 2.5 }, /"Quantity" \(integer\) expects a JSON integer/],
  ])('refuses %j with a 400 naming the property', (data, message) => {
    let caught: unknown;
    try {
      check(data);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(EmulatorHttpError);
    expect((caught as EmulatorHttpError).status).toBe(400);
    expect((caught as EmulatorHttpError).message).toMatch(message);
  });
});
