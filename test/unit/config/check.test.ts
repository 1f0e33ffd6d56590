import { resolve } from 'node:path';
import { loadConfigFileSync, parseConfig } from '../../../functions/config/load';
import { checkConfigAgainstTemplates, configWarnings } from '../../../functions/mapping/config-check';
import { fakeTemplates } from '../mapping/fixtures/templates';

const shipped = resolve(__dirname, '../../../config/docrelay.yaml');

const config = (documents: string) =>
  parseConfig(`
service: { baseUrl: https://docs.example.com }
integrations:
  - id: shop
    verify: { scheme: github, secret: s }
    documents:
${documents}`);

describe('checkConfigAgainstTemplates', () => {
  it('passes the shipped config against templates shaped like the emulator samples, reading each once', async () => {
    const { source, reads } = fakeTemplates();
    const report = await checkConfigAgainstTemplates(loadConfigFileSync(shipped), source);
    expect(report.problems).toEqual([]);
    expect(report.templatesChecked).toEqual(['9002', '9001', '9003']);
    expect(reads).toEqual(['9002', '9001', '9003']);
  });

  it('warns about scheme none, and the shipped config has no such integration', () => {
    const unsigned = parseConfig(`
service: { baseUrl: https://docs.example.com }
integrations:
  - id: open-door
    verify: { scheme: none, allowUnsigned: true }
    documents:
      - name: note
        template: { id: "9003" }
        data: { Title: "'x'" }`);
    expect(configWarnings(unsigned)).toEqual([
      {
        path: 'integrations[0].verify.scheme',
        message: expect.stringMatching(/^none: POST \/v1\/hooks\/open-door accepts unsigned webhooks/),
      },
    ]);
    expect(configWarnings(loadConfigFileSync(shipped))).toEqual([]);
  });

  it('accepts an events-only integration without verify, and refuses one with neither', () => {
    const eventsOnly = parseConfig(`
service: { baseUrl: https://docs.example.com }
integrations:
  - id: events
    eventBridge: { eventPattern: { source: ["a"] } }
    documents:
      - name: note
        template: { id: "9003" }
        data: { Title: "'x'" }`);
    expect(eventsOnly.integrations.get('events')?.config.verify).toBeUndefined();
    expect(() =>
      parseConfig(`
service: { baseUrl: https://docs.example.com }
integrations:
  - id: nothing
    documents:
      - name: note
        template: { id: "9003" }
        data: { Title: "'x'" }`),
    ).toThrow(
      /integrations\[0\]\.verify: an integration takes webhooks \(give verify\) or EventBridge events/,
    );
  });

  it('reports every kind of template problem at once, located by config path', async () => {
    const loaded = config(`
      - name: unknown-template
        template: { id: "9999" }
        data: { Title: "'x'" }
      - name: no-file-id
        template: { id: "9002" }
        data: { Release: "tag", Repository: "repo" }
      - name: unknown-file
        template: { id: "9002", fileId: "1" }
        data: { Release: "tag", Repository: "repo" }
      - name: typo-and-missing
        template: { id: "9001" }
        data: { Customer Name: "a", Amout: "1", Currency: "'gold'" }
`);
    const report = await checkConfigAgainstTemplates(loaded, fakeTemplates().source);
    expect(report.problems.map((p) => [p.path, p.message])).toEqual([
      ['integrations[0].documents[0].template.id', 'unknown template "9999" (run docrelay templates list)'],
      [
        'integrations[0].documents[1].template',
        'template 9002 (Release pack) has 2 files: set template.fileId to one of 90021 (release-notes.docx), 90022 (changelog.docx) [shop/no-file-id]',
      ],
      [
        'integrations[0].documents[2].template',
        'template 9002 (Release pack) has no file "1"; its files: 90021 (release-notes.docx), 90022 (changelog.docx) [shop/unknown-file]',
      ],
      [
        'integrations[0].documents[3].data.Amout',
        'template 9001 (Invoice) has no such property (did you mean "Amount"?) [shop/typo-and-missing]',
      ],
      [
        'integrations[0].documents[3].data.Currency',
        '"gold" is not one of the allowed values "EUR", "USD", "GBP" [shop/typo-and-missing]',
      ],
      [
        'integrations[0].documents[3].data',
        '"Invoice Number" is required by template file 90011 (invoice.docx) but not mapped in data [shop/typo-and-missing]',
      ],
    ]);
  });

  it('lets a template read failure other than not-found through', async () => {
    const loaded = config(`
      - name: a
        template: { id: "9001" }
        data: { Customer Name: "a", Invoice Number: "b" }
`);
    const failing = { getTemplate: () => Promise.reject(new Error('connect ECONNREFUSED')) };
    await expect(checkConfigAgainstTemplates(loaded, failing)).rejects.toThrow('ECONNREFUSED');
  });
});
