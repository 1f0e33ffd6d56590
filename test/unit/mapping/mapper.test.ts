import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import githubExamples from '@octokit/webhooks-examples';
import type { CompiledIntegration, LoadedConfig } from '../../../functions/config/compile';
import { findRule } from '../../../functions/config/compile';
import { loadConfigFileSync, parseConfig } from '../../../functions/config/load';
import { MappingError } from '../../../functions/mapping/errors';
import type { MappingInput } from '../../../functions/mapping/evaluate';
import { evaluateRules, isTruthy, mapDelivery, mapRule } from '../../../functions/mapping/mapper';
import { fakeTemplates, invoiceTemplate, releaseTemplate } from './fixtures/templates';

const root = resolve(__dirname, '../../..');
const shipped: LoadedConfig = loadConfigFileSync(resolve(root, 'config/docrelay.yaml'));
const sample = (name: string): unknown =>
  JSON.parse(readFileSync(resolve(root, 'config/samples', name), 'utf8'));
const integration = (id: string): CompiledIntegration => shipped.integrations.get(id)!;
const input = (
  body: unknown,
  headers: Record<string, string> = {},
  query: Record<string, string> = {},
): MappingInput => ({
  body,
  headers,
  query,
  receivedAt: '2024-06-01T12:00:00.000Z',
});

/** The release examples of @octokit/webhooks-examples, real payloads GitHub sent. */
const releaseExamples = (() => {
  const group = githubExamples.find((g) => g.name === 'release');
  if (group === undefined) throw new Error('no release examples');
  return group.examples as Array<{ action: string; release: { tag_name: string } }>;
})();

/** Catches the MappingError a promise rejects with. */
async function mappingError(promise: Promise<unknown>): Promise<MappingError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof MappingError) return error;
    throw error;
  }
  throw new Error('expected a MappingError');
}

const inline = (documents: string, extra = '') =>
  parseConfig(`
service: { baseUrl: https://docs.example.com }
integrations:
  - id: shop
    verify: { scheme: github, secret: s }
${extra}    documents:
${documents}`).integrations.get('shop')!;

describe('mapDelivery on real-world payloads with the shipped config', () => {
  it('maps every published GitHub release example to release notes and a changelog', async () => {
    const published = releaseExamples.filter((e) => e.action === 'published');
    expect(published.length).toBeGreaterThan(0);
    for (const payload of published) {
      const { source } = fakeTemplates();
      const documents = await mapDelivery(integration('github-releases'), input(payload), source);
      expect(documents.map((d) => [d.rule, d.templateId, d.templateFileId])).toEqual([
        ['release-notes', '9002', '90021'],
        ['changelog', '9002', '90022'],
      ]);
      // The example releases have no title (null or ""), so the tag stands in.
      expect(documents[0]?.data).toEqual({
        Release: payload.release.tag_name,
        Repository: 'Codertocat/Hello-World',
        Published: '2019-05-15',
        Author: 'Codertocat',
        Channel: 'stable',
      });
    }
  });

  it('ignores the other release actions without reading templates', async () => {
    for (const payload of releaseExamples.filter((e) => e.action !== 'published')) {
      const { source, reads } = fakeTemplates();
      await expect(mapDelivery(integration('github-releases'), input(payload), source)).resolves.toEqual([]);
      expect(reads).toEqual([]);
    }
  });

  it('maps the shipped GitHub sample (taken from the examples)', async () => {
    const documents = await mapDelivery(
      integration('github-releases'),
      input(sample('github-release-published.json')),
      fakeTemplates().source,
    );
    expect(documents).toHaveLength(2);
  });

  it('maps a Stripe invoice.paid event: cents, epoch seconds and lower-case currency converted', async () => {
    const documents = await mapDelivery(
      integration('stripe-invoices'),
      input(sample('stripe-invoice-paid.json')),
      fakeTemplates().source,
    );
    expect(documents).toEqual([
      {
        rule: 'invoice',
        templateId: '9001',
        templateFileId: '90011',
        data: {
          'Customer Name': 'Jenny Rosen',
          'Invoice Number': 'A1B2C3D4-0007',
          Amount: 129.5,
          'Due Date': '2024-06-30',
          Currency: 'EUR',
          Paid: true,
        },
      },
    ]);
  });

  it('leaves out a Stripe due_date of null (charge_automatically invoices have none)', async () => {
    const event = sample('stripe-invoice-paid.json') as { data: { object: Record<string, unknown> } };
    event.data.object.due_date = null;
    const [document] = await mapDelivery(
      integration('stripe-invoices'),
      input(event),
      fakeTemplates().source,
    );
    expect(document?.data).not.toHaveProperty('Due Date');
  });

  it('maps a Shopify order: string prices become numbers, the date stays the shop-local date', async () => {
    const documents = await mapDelivery(
      integration('shopify-orders'),
      input(sample('shopify-order.json'), { 'x-shopify-topic': 'orders/paid' }),
      fakeTemplates().source,
    );
    expect(documents[0]?.data).toEqual({
      'Customer Name': 'Bob Norman',
      'Invoice Number': '#1001',
      Amount: 199,
      'Due Date': '2024-05-31',
      Currency: 'USD',
      Paid: true,
    });
  });

  it('maps a Standard Webhooks note and an EventBridge event', async () => {
    const [note] = await mapDelivery(
      integration('internal-notes'),
      input(sample('internal-note.json')),
      fakeTemplates().source,
    );
    expect(note).toEqual({
      rule: 'note',
      templateId: '9003',
      templateFileId: '90031',
      data: {
        Title: 'Quarterly review',
        Body: 'Revenue is up 12% on the quarter; hiring plan approved. (Dana Scully)',
      },
    });
    const [order] = await mapDelivery(
      integration('order-events'),
      input(sample('order-paid-event.json')),
      fakeTemplates().source,
    );
    expect(order?.data).toMatchObject({
      'Customer Name': 'Ada Lovelace',
      Currency: 'GBP',
      'Due Date': '2024-06-01',
      Paid: true,
    });
  });
});

describe('evaluateRules', () => {
  it('returns the matching rules in config order', async () => {
    const rules = await evaluateRules(integration('github-releases'), input({ action: 'published' }));
    expect(rules.map((r) => r.name)).toEqual(['release-notes', 'changelog']);
    await expect(
      evaluateRules(integration('github-releases'), input({ action: 'created' })),
    ).resolves.toEqual([]);
  });

  it('sees $headers, $query and $receivedAt', async () => {
    const shop = inline(`
      - name: by-header
        when: "$headers.\`x-topic\` = 'a'"
        template: { id: "9003" }
        data: { Title: "'t'" }
      - name: by-query
        when: "$query.kind = 'b'"
        template: { id: "9003" }
        data: { Title: "'t'" }
      - name: by-time
        when: "$substring($receivedAt, 0, 4) = '2024'"
        template: { id: "9003" }
        data: { Title: "'t'" }
`);
    const rules = await evaluateRules(shop, input({}, { 'X-Topic': 'a' }, { kind: 'b' }));
    expect(rules.map((r) => r.name)).toEqual(['by-header', 'by-query', 'by-time']);
  });

  it('treats `when` with JSONata truthiness', async () => {
    expect([true, 1, 'x', [0, 1], { a: 1 }].map(isTruthy)).toEqual([true, true, true, true, true]);
    expect([false, 0, '', [], [0, ''], {}, null, undefined].map(isTruthy)).toEqual(Array(8).fill(false));
  });

  it('fails loudly when a `when` cannot be evaluated, instead of skipping the rule', async () => {
    const shop = inline(`
      - name: arithmetic
        when: "amount + 1 > 2"
        template: { id: "9003" }
        data: { Title: "'t'" }
`);
    const error = await mappingError(evaluateRules(shop, input({ amount: 'ten' })));
    expect(error.code).toBe('MAPPING_EXPRESSION_FAILED');
    expect(error.problems[0]).toMatchObject({
      rule: 'arithmetic',
      message: expect.stringMatching(/^when: amount \+ 1 > 2: failed/),
    });
  });
});

describe('mapRule checks against the template', () => {
  const shop = inline(`
      - name: invoice
        template: { id: "9001" }
        data:
          Customer Name: "customer"
          Invoice Number: "number"
          Amount: "amount"
          Due Date: "due"
          Currency: "currency"
`);
  const rule = shop.rules[0]!;

  it('reports every problem of the rule at once, each naming its property', async () => {
    const error = await mappingError(
      mapRule(rule, input({ number: 'A-1', amount: 'lots', due: 'soon', currency: 'JPY' }), invoiceTemplate),
    );
    expect(error).toMatchObject({ code: 'MAPPING_FAILED', retryable: false, integration: 'shop' });
    expect(error.problems.map((p) => [p.code, p.property])).toEqual([
      ['MAPPING_INVALID_VALUE', 'Amount'],
      ['MAPPING_INVALID_VALUE', 'Due Date'],
      ['MAPPING_REQUIRED_MISSING', 'Customer Name'],
    ]);
    expect(error.message).toBe(
      'shop: rule invoice: "Amount": expected a number, got "lots" (from amount); ' +
        'rule invoice: "Due Date": cannot read "soon" as a date (expected YYYY-MM-DD, an ISO 8601 timestamp, or epoch seconds/milliseconds; for other formats use $toMillis(value, picture)) (from due); ' +
        'rule invoice: "Customer Name": required by template file 90011, but its expression gave no value for this payload',
    );
  });

  it('falls back to the select default for a value the template does not offer', async () => {
    const document = await mapRule(
      rule,
      input({ customer: 'C', number: 'N', currency: 'JPY' }),
      invoiceTemplate,
    );
    expect(document.data).toEqual({ 'Customer Name': 'C', 'Invoice Number': 'N', Currency: 'EUR' });
  });

  it('refuses a mapped name the template does not define (a typo guard)', async () => {
    const typo = inline(`
      - name: invoice
        template: { id: "9001" }
        data: { Customer Name: "'c'", Invoice Number: "'n'", Amout: "1" }
`).rules[0]!;
    const error = await mappingError(mapRule(typo, input({}), invoiceTemplate));
    expect(error.code).toBe('MAPPING_UNKNOWN_PROPERTY');
    expect(error.problems).toEqual([
      {
        code: 'MAPPING_UNKNOWN_PROPERTY',
        rule: 'invoice',
        property: 'Amout',
        message: 'template 9001 (Invoice) has no such property (did you mean "Amount"?)',
      },
    ]);
  });

  it('names the files of a multi-file template when fileId is missing', async () => {
    const release = inline(`
      - name: release
        template: { id: "9002" }
        data: { Release: "'1'", Repository: "'r'" }
`).rules[0]!;
    const error = await mappingError(mapRule(release, input({}), releaseTemplate));
    expect(error.code).toBe('MAPPING_TEMPLATE_FILE');
    expect(error.message).toContain(
      'set template.fileId to one of 90021 (release-notes.docx), 90022 (changelog.docx)',
    );
  });

  it('refuses a required property that is not mapped at all', async () => {
    const partial = inline(`
      - name: invoice
        template: { id: "9001" }
        data: { Customer Name: "'c'" }
`).rules[0]!;
    const error = await mappingError(mapRule(partial, input({}), invoiceTemplate));
    expect(error.problems).toEqual([
      expect.objectContaining({
        code: 'MAPPING_REQUIRED_MISSING',
        property: 'Invoice Number',
        message: 'required by template file 90011 but not mapped in data',
      }),
    ]);
  });

  it('refuses a read-only property', async () => {
    const template = {
      ...invoiceTemplate,
      properties: [...(invoiceTemplate.properties ?? []), { type: 'text', name: 'Code', readOnly: true }],
    };
    const ro = inline(`
      - name: invoice
        template: { id: "9001" }
        data: { Customer Name: "'c'", Invoice Number: "'n'", Code: "'x'" }
`).rules[0]!;
    const error = await mappingError(mapRule(ro, input({}), template));
    expect(error.problems[0]).toMatchObject({
      property: 'Code',
      message: expect.stringMatching(/read-only/),
    });
  });

  it('is found by integration and rule name for the worker', () => {
    expect(findRule(shipped, 'stripe-invoices', 'invoice')?.config.template.id).toBe('9001');
    expect(findRule(shipped, 'stripe-invoices', 'nope')).toBeUndefined();
  });
});

describe('mapDelivery errors', () => {
  it('lets template read failures through unchanged (they may be retryable)', async () => {
    const failure = Object.assign(new Error('service unavailable'), { retryable: true });
    const source = { getTemplate: () => Promise.reject(failure) };
    await expect(
      mapDelivery(integration('stripe-invoices'), input(sample('stripe-invoice-paid.json')), source),
    ).rejects.toBe(failure);
  });

  it('collects the problems of every failing rule', async () => {
    const error = await mappingError(
      mapDelivery(integration('github-releases'), input({ action: 'published' }), fakeTemplates().source),
    );
    expect(error.problems.map((p) => `${p.rule}/${p.property}`)).toEqual([
      'release-notes/Release',
      'release-notes/Repository',
      'changelog/Release',
      'changelog/Repository',
    ]);
  });
});
