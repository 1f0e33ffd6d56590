/**
 * The web console in a real browser (Debian's chromium driven by playwright-core) against the local stack
 * over loopback: a webhook's job appears and turns `stored` without a reload; the job page shows its file with
 * size, SHA-256 and a download link, and the data mapped again from the sealed payload; the playground maps a
 * pasted payload. The local API's own guards are checked over raw HTTP: a foreign Host, a
 * cross-origin POST and a text/plain POST to the local events route are refused and create nothing.
 *
 * Set DOCRELAY_CONSOLE_SCREENSHOT to a path to save a screenshot of the console there (docs/images/console.png).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { rawText } from './helpers/raw-http';
import { readSample, startTestStack, type TestStack } from './helpers/stack';

jest.setTimeout(120_000);

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  // .ci/run installs it; elsewhere: apt-get install -y chromium (as root).
  process.stderr.write(`console.test.ts: skipped, ${CHROMIUM} is missing (apt-get install -y chromium)\n`);
}
const describeBrowser = haveChromium ? describe : describe.skip;

let t: TestStack;
let profile: string;
let context: BrowserContext;
let page: Page;

/** One raw HTTP request to the stack (node:http lets a test set Host and Origin as a browser page would). */
const raw = (method: string, path: string, headers: Record<string, string>, body = '') =>
  rawText(t.url, method, path, headers, body);

beforeAll(async () => {
  t = await startTestStack({ emulator: { seed: 7 } });
});

afterAll(async () => {
  await context?.close();
  if (profile !== undefined) await rm(profile, { recursive: true, force: true });
  await t?.dispose();
});

describeBrowser('the console in chromium', () => {
  beforeAll(async () => {
    profile = await mkdtemp(join(tmpdir(), 'docrelay-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: { width: 1280, height: 800 },
    });
    page = context.pages()[0] ?? (await context.newPage());
  });

  it('shows a new job and its change to stored without a reload', async () => {
    await page.goto(`${t.url}/`);
    await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations += 1;
    });

    const answer = await t.postGithub(await readSample('github-release-published.json'));
    expect(answer.status).toBe(202);
    const jobId = answer.body.jobs[0]?.jobId as string;

    await page.locator(`tr[data-job="${jobId}"]`).waitFor({ timeout: 30_000 });
    await page.locator(`tr[data-job="${jobId}"][data-status="stored"]`).waitFor({ timeout: 60_000 });
    expect(navigations).toBe(0);
    const screenshot = process.env.DOCRELAY_CONSOLE_SCREENSHOT;
    if (screenshot !== undefined && screenshot !== '') await page.screenshot({ path: screenshot });
  });

  it('filters by status and finds a job by its id', async () => {
    const answer = await t.postGithub(await readSample('github-release-published.json'));
    const jobId = answer.body.jobs[0]?.jobId as string;
    await page.goto(`${t.url}/#/?status=failed`);
    await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
    await page.getByText('No jobs yet.').waitFor();
    await page.getByLabel('Job or delivery id').fill(jobId);
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('heading', { name: `Job ${jobId}` }).waitFor();
  });

  it('shows a stored job with its file and the data its rule mapped', async () => {
    const answer = await t.postGithub(await readSample('github-release-published.json'));
    const jobId = answer.body.jobs[0]?.jobId as string;
    const [view] = await t.waitForJobs([jobId]);
    const file = view?.files[0];
    await page.goto(`${t.url}/#/jobs/${jobId}`);
    await page.locator('#job-status .status-stored').waitFor();
    await page.getByText(file?.sha256 as string).waitFor();
    expect(await page.getByRole('link', { name: 'Download' }).getAttribute('href')).toContain(file?.key);
    expect(await page.getByRole('button', { name: 'Replay', exact: true }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Show the mapped data' }).click();
    const mapped = JSON.parse((await page.locator('#mapped-data').textContent()) ?? '{}') as object;
    expect(Object.keys(mapped).length).toBeGreaterThan(0);
  });

  it('maps a pasted payload in the playground', async () => {
    await page.goto(`${t.url}/#/playground`);
    await page.getByLabel('Integration').selectOption('github-releases');
    await page
      .getByLabel('Payload (JSON)')
      .fill((await readSample('github-release-published.json')).toString());
    await page.getByLabel('Headers (JSON, optional)').fill('{"x-github-event":"release"}');
    await page.getByRole('button', { name: 'Map' }).click();
    await page.locator('#pg-output pre').first().waitFor();
    expect(await page.locator('#pg-output h2').first().textContent()).toContain('Rule');
  });
});

describe('the local API refuses what a web page could send', () => {
  const own = (): string => new URL(t.url).host;
  const event = JSON.stringify({
    version: '0',
    id: 'evt-console-guard',
    'detail-type': 'Order Paid',
    source: 'shop',
    account: '000000000000',
    time: new Date().toISOString(),
    region: 'us-east-1',
    resources: [],
    detail: {},
  });

  it('refuses a foreign Host (DNS rebinding)', async () => {
    const answer = await raw('GET', '/v1/jobs', { host: `attacker.example:${new URL(t.url).port}` });
    expect(answer.status).toBe(421);
  });

  it('refuses a cross-origin POST and a text/plain POST to the events route, creating nothing', async () => {
    const crossOrigin = await raw(
      'POST',
      '/_local/events/order-events',
      { host: own(), origin: 'http://attacker.example', 'content-type': 'text/plain' },
      event,
    );
    expect(crossOrigin.status).toBe(403);
    const plain = await raw(
      'POST',
      '/_local/events/order-events',
      { host: own(), 'content-type': 'text/plain' },
      event,
    );
    expect(plain.status).toBe(415);
    const found = await raw('GET', '/v1/deliveries/evt-console-guard', { host: own() });
    expect(found.status).toBe(404);
  });

  it("answers an invalid event with a problem naming the field, not zod's dump", async () => {
    const answer = await raw(
      'POST',
      '/_local/events/order-events',
      { host: own(), 'content-type': 'application/json' },
      '{"id": 1}',
    );
    expect(answer.status).toBe(400);
    const body = JSON.parse(answer.body) as { detail: string };
    expect(body.detail).not.toMatch(/^\[/);
    expect(body.detail).toMatch(/^[\w.-]+: /);
  });

  it('lists jobs and answers a delivery by its id', async () => {
    const answer = await t.postGithub(await readSample('github-release-published.json'));
    const deliveryId = answer.body.deliveryId;
    const list = await raw('GET', `/v1/jobs?delivery=${encodeURIComponent(deliveryId)}`, { host: own() });
    expect(
      (JSON.parse(list.body) as { jobs: Array<{ deliveryId: string }> }).jobs.map((j) => j.deliveryId),
    ).toEqual(answer.body.jobs.map(() => deliveryId));
    const delivery = await raw('GET', `/v1/deliveries/${encodeURIComponent(deliveryId)}`, { host: own() });
    expect(delivery.status).toBe(200);
    expect((JSON.parse(delivery.body) as { jobs: unknown[] }).jobs).toHaveLength(answer.body.jobs.length);
    const unknown = await raw('GET', '/v1/jobs?status=lost', { host: own() });
    expect(unknown.status).toBe(400);
  });
});
