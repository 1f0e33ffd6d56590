import { DocgenBadResponseError } from '../../../functions/docgen/errors';
import { documentSchema, parseAnswer, templateSchema } from '../../../functions/docgen/wire';

const template = (property: Record<string, unknown>, file: Record<string, unknown> = {}) =>
  JSON.stringify({
    id: '9002',
    name: 'Invoice',
    createdDateTime: '2026-01-01T00:00:00Z',
    files: [{ id: '90021', filename: 'invoice.docx', mimeType: 'x', size: 1, ...file }],
    properties: [{ type: 'select', name: 'Tier', ...property }],
  });

const document = (file: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    id: 'd1',
    name: 'Invoice 1',
    data: {},
    files: [
      {
        id: 'f1',
        mimeType: 'text/plain',
        filename: 'a.txt',
        size: 11,
        '@api.downloadUrl': 'https://docs.example.com/f1?token=t',
        ...file,
      },
    ],
    ...extra,
  });

describe('the template answer: lenient where the client only passes values on', () => {
  it('reads null where a field is optional as absent', () => {
    const parsed = parseAnswer(
      'get template',
      200,
      template(
        { label: null, allowedValues: null, multipleValues: null, readOnly: null, description: null },
        { usedProperties: null },
      ),
      templateSchema,
      [],
    );
    const property = parsed.properties?.[0];
    expect(property).toMatchObject({ type: 'select', name: 'Tier' });
    expect(property?.label).toBeUndefined();
    expect(property?.allowedValues).toBeUndefined();
    expect(property?.multipleValues).toBeUndefined();
    expect(property?.readOnly).toBeUndefined();
    expect(parsed.files[0]?.usedProperties).toBeUndefined();
    expect(
      parseAnswer('get template', 200, template({}).replace('"properties":', '"x":'), templateSchema, []),
    ).toBeTruthy();
  });

  it('reads allowed values of another JSON type as their text (the form mapped values are compared in)', () => {
    const parsed = parseAnswer(
      'get template',
      200,
      template({ type: 'integer', allowedValues: [1, 2, null, true, 'three'] }),
      templateSchema,
      [],
    );
    expect(parsed.properties?.[0]?.allowedValues).toEqual(['1', '2', 'true', 'three']);
  });

  it('still refuses a template without what the client needs', () => {
    expect(() => parseAnswer('get template', 200, template({ name: null }), templateSchema, [])).toThrow(
      DocgenBadResponseError,
    );
  });
});

describe('the create answer: a document already made is not refused for a field the client only records', () => {
  it.each([
    ['missing', undefined, undefined],
    ['null', null, undefined],
    ['a numeric string', '2048', 2048],
    ['a word', 'big', undefined],
    ['negative', -1, undefined],
    ['a fraction', 1.5, undefined],
  ])('reads a size that is %s as best it can', (_name, size, expected) => {
    const parsed = parseAnswer('create document', 201, document({ size }), documentSchema, []);
    expect(parsed.files[0]?.size).toBe(expected);
    expect(parsed.files[0]?.downloadUrl).toBe('https://docs.example.com/f1?token=t');
  });

  it('reads null references and flags as absent', () => {
    const parsed = parseAnswer(
      'create document',
      201,
      document({ templateFileReference: null, isTemporary: null }, { templateReference: null }),
      documentSchema,
      [],
    );
    expect(parsed.files[0]?.templateFileReference).toBeUndefined();
    expect(parsed.files[0]?.isTemporary).toBeUndefined();
    expect(parsed.templateReference).toBeUndefined();
  });

  it('still refuses a file without a link or a name', () => {
    expect(() =>
      parseAnswer('create document', 201, document({ '@api.downloadUrl': undefined }), documentSchema, []),
    ).toThrow(DocgenBadResponseError);
    expect(() =>
      parseAnswer('create document', 201, document({ filename: null }), documentSchema, []),
    ).toThrow(DocgenBadResponseError);
  });
});
