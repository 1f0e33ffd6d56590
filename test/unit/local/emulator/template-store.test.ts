import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import mammoth from 'mammoth';
import { parseManifest } from '../../../../local/emulator/manifest';
import { renderTemplateFile } from '../../../../local/emulator/renderer';
import {
  buildTemplate,
  decodeSkipToken,
  encodeSkipToken,
  largeFileTemplate,
  loadTemplatesDir,
  type StoredTemplate,
  sampleTemplatesDir,
  syntheticTemplates,
  TemplateStore,
  templateListItem,
  templateResource,
} from '../../../../local/emulator/template-store';
import { sampleFiles } from '../../../../local/emulator/templates/build-samples';

const byId = (templates: StoredTemplate[], id: string): StoredTemplate => {
  const template = templates.find((t) => t.id === id);
  if (template === undefined) throw new Error(`no template ${id}`);
  return template;
};

describe('sample templates', () => {
  let samples: StoredTemplate[];
  beforeAll(async () => {
    samples = await loadTemplatesDir(sampleTemplatesDir);
  });

  it('are the five shipped ones, one of them inactive', () => {
    expect(samples.map((t) => [t.id, t.name, t.active]).sort()).toEqual([
      ['9001', 'Invoice', true],
      ['9002', 'Release pack', true],
      ['9003', 'Plain note', true],
      ['9004', 'Invoice (2023 layout)', false],
      ['9005', 'Order summary', true],
    ]);
  });

  it('are byte for byte what build-samples.ts produces', async () => {
    for (const file of sampleFiles) {
      const committed = await readFile(join(sampleTemplatesDir, file.path));
      expect({ path: file.path, same: committed.equals(file.build()) }).toEqual({
        path: file.path,
        same: true,
      });
    }
  });

  it('derive the invoice properties from the tags, typed by the manifest', () => {
    const invoice = byId(samples, '9001');
    expect(invoice.properties.map((p) => [p.name, p.type])).toEqual([
      ['Customer Name', 'text'],
      ['Invoice Number', 'text'],
      ['Amount', 'number'],
      ['Due Date', 'date'],
      ['Currency', 'select'],
      ['Paid', 'boolean'],
    ]);
    expect(invoice.properties.find((p) => p.name === 'Currency')).toEqual({
      type: 'select',
      name: 'Currency',
      label: 'Currency',
      allowedValues: ['EUR', 'USD', 'GBP'],
      defaultValue: 'EUR',
    });
  });

  it('give each file of the release pack its used properties and required flags', () => {
    const pack = byId(samples, '9002');
    const [notes, changelog] = pack.files;
    expect(notes?.resource.usedProperties).toEqual([
      { name: 'Release', required: true },
      { name: 'Repository', required: true },
      { name: 'Channel', required: false },
      { name: 'Published', required: false },
      { name: 'Author', required: false },
    ]);
    expect(changelog?.resource.usedProperties.map((u) => u.name)).toEqual([
      'Repository',
      'Release',
      'Channel',
      'Published',
    ]);
  });

  it('describe the plain note as a text/plain file whose Body has no label', () => {
    const note = byId(samples, '9003');
    expect(note.files[0]?.resource).toMatchObject({ mimeType: 'text/plain', filename: 'note.txt', size: 16 });
    expect(note.properties.find((p) => p.name === 'Body')).toEqual({
      type: 'text',
      name: 'Body',
      description: 'Text of the note.',
    });
  });

  it('render a .docx that mammoth reads, with the values merged', async () => {
    const invoice = byId(samples, '9001');
    const file = invoice.files[0];
    if (file === undefined) throw new Error('no file');
    const docx = renderTemplateFile(file, { 'Customer Name': 'Ada & Co <Ltd>', 'Invoice Number': 'INV-7' });
    const { value } = await mammoth.extractRawText({ buffer: docx });
    expect(value).toContain('Invoice INV-7');
    expect(value).toContain('Billed to: Ada & Co <Ltd>');
    expect(value).toContain('Due date: \n');
  });

  it('render a text file', () => {
    const note = byId(samples, '9003');
    const file = note.files[0];
    if (file === undefined) throw new Error('no file');
    expect(renderTemplateFile(file, { Title: 'Hi', Body: 'there' }).toString()).toBe('Hi\n\nthere\n');
  });
});

describe('template resources', () => {
  it('list items carry id, name, createdDateTime and files without usedProperties', () => {
    const [template] = syntheticTemplates(1);
    if (template === undefined) throw new Error('no template');
    const item = templateListItem(template);
    expect(Object.keys(item)).toEqual(['id', 'name', 'createdDateTime', 'files']);
    expect(item.files[0]).not.toHaveProperty('usedProperties');
    expect(templateResource(template).files[0]?.usedProperties).toEqual([
      { name: 'Title', required: true },
      { name: 'Body', required: false },
    ]);
  });
});

describe('template store', () => {
  it('lists active templates newest first, in pages', () => {
    const store = new TemplateStore(syntheticTemplates(5));
    const first = store.page(0, 2);
    expect(first.items.map((t) => t.id)).toEqual(['20005', '20004']);
    expect(first.more).toBe(true);
    expect(store.page(4, 2)).toMatchObject({ more: false });
    expect(store.page(4, 2).items.map((t) => t.id)).toEqual(['20001']);
  });

  it('treats an inactive template as unknown', async () => {
    const store = new TemplateStore(await loadTemplatesDir(sampleTemplatesDir));
    expect(store.get('9004')).toBeUndefined();
    expect(store.get('9001')?.name).toBe('Invoice');
    expect(store.activeCount).toBe(4);
  });

  it('rejects duplicate template ids', () => {
    expect(() => new TemplateStore([...syntheticTemplates(1), ...syntheticTemplates(1)])).toThrow(
      /duplicate/,
    );
  });

  it('round-trips skip tokens and rejects foreign ones', () => {
    expect(decodeSkipToken(encodeSkipToken(400))).toBe(400);
    expect(decodeSkipToken('bm9wZQ')).toBeUndefined();
  });

  it('adds a large-file text template padded to the requested size', () => {
    expect(largeFileTemplate(1024).files[0]?.padToBytes).toBe(1024);
  });
});

describe('manifests', () => {
  const text = new Map([['a.txt', Buffer.from('{Title}')]]);
  const manifest = (extra: object) =>
    parseManifest({ id: '1', name: 'x', createdDateTime: '2024-01-01T00:00:00Z', ...extra }, 'test');

  it('reject a described property that no file uses', () => {
    const m = manifest({ properties: { Other: { type: 'text' } }, files: [{ id: '11', filename: 'a.txt' }] });
    expect(() => buildTemplate(m, text)).toThrow(/"Other" but no file has that tag/);
  });

  it('reject a required property that the file does not use', () => {
    const m = manifest({ files: [{ id: '11', filename: 'a.txt', required: ['Missing'] }] });
    expect(() => buildTemplate(m, text)).toThrow(/requires "Missing"/);
  });

  it('reject a select without allowed values, or a default outside them', () => {
    expect(() =>
      manifest({ properties: { S: { type: 'select' } }, files: [{ id: '1', filename: 'a.txt' }] }),
    ).toThrow(/allowedValues/);
    expect(() =>
      manifest({
        properties: { S: { type: 'select', allowedValues: ['a'], defaultValue: 'b' } },
        files: [{ id: '1', filename: 'a.txt' }],
      }),
    ).toThrow(/default/);
  });

  it('default a property without metadata to text', () => {
    const m = manifest({ files: [{ id: '11', filename: 'a.txt' }] });
    expect(buildTemplate(m, text).properties).toEqual([{ type: 'text', name: 'Title' }]);
  });
});
