/** The start-up hint of `npm start` names an integration the config has, with a sample when there is one. */
import { join } from 'node:path';
import { readyLines } from '../../../bin/commands/dev';
import { parseConfig } from '../../../functions/config/load';

const root = join(__dirname, '../../..');
const service = 'service: { baseUrl: https://docs.example.com }\n';
const stack = (yaml: string) => ({
  url: 'http://127.0.0.1:3000',
  docgenUrl: 'http://127.0.0.1:4010',
  docgen: 'embedded' as const,
  config: parseConfig(yaml),
});
const settings = { dataDir: '/tmp/data', configPath: join(root, 'config/docrelay.yaml') };
const tryLine = (yaml: string): string | undefined =>
  readyLines(stack(yaml), settings, root).find((line) => line.startsWith('  try:'));

describe('readyLines', () => {
  it('names the first webhook integration, with its shipped sample', () => {
    const yaml = `${service}integrations:
  - id: notes
    eventBridge: { eventPattern: { source: [app] } }
    documents: [{ name: n, template: { id: "9003" }, data: { Title: "t" } }]
  - id: stripe-invoices
    verify: { scheme: stripe, secret: s }
    documents: [{ name: n, template: { id: "9003" }, data: { Title: "t" } }]
`;
    expect(tryLine(yaml)).toBe(
      '  try:       npx docrelay send stripe-invoices --payload config/samples/stripe-invoice-paid.json --wait',
    );
  });

  it('uses a placeholder when no sample matches, and put-event for an events-only config', () => {
    const webhook = `${service}integrations:
  - id: acme
    verify: { scheme: github, secret: s }
    documents: [{ name: n, template: { id: "9003" }, data: { Title: "t" } }]
`;
    expect(tryLine(webhook)).toBe('  try:       npx docrelay send acme --payload <file> --wait');
    const events = `${service}integrations:
  - id: orders
    eventBridge: { eventPattern: { source: [shop] } }
    documents: [{ name: n, template: { id: "9003" }, data: { Title: "t" } }]
`;
    expect(tryLine(events)).toBe('  try:       npx docrelay put-event orders --event <file>');
  });

  it('says whether the service is the embedded emulator or the one DOCGEN_BASE_URL names', () => {
    const yaml = `${service}integrations:
  - id: acme
    verify: { scheme: github, secret: s }
    documents: [{ name: n, template: { id: "9003" }, data: { Title: "t" } }]
`;
    const serviceLine = (docgen: 'embedded' | 'external') =>
      readyLines({ ...stack(yaml), docgen }, settings, root).find((line) => line.startsWith('  service:'));
    expect(serviceLine('embedded')).toBe('  service:   http://127.0.0.1:4010 (embedded emulator)');
    expect(serviceLine('external')).toBe('  service:   http://127.0.0.1:4010 (DOCGEN_BASE_URL)');
  });
});
