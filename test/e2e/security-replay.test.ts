/**
 * A captured GitHub or Shopify delivery replayed under new id headers (which those senders do not sign) makes
 * no new job: the signed content dedupes as well as the id.
 */
import { readSample, startTestStack, type TestStack } from './helpers/stack';
import { signGithub, signShopify } from './helpers/webhooks';

jest.setTimeout(60_000);

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack({ startWorkers: false });
});

afterAll(async () => {
  await t?.dispose();
});

it.each([
  ['github-releases', 'github-release-published.json', 'docrelay/github-webhook', signGithub],
  ['shopify-orders', 'shopify-order.json', 'docrelay/shopify-webhook', signShopify],
])(
  '%s: the same signed body under new ids is a duplicate of the first',
  async (integration, sample, secretName, sign) => {
    const body = await readSample(sample);
    const secret = await t.secret(secretName);
    const queued = async (): Promise<number> => {
      const counts = await t.queueCounts();
      return counts.visible + counts.inFlight + counts.delayed;
    };
    const before = await queued();
    const first = await t.post(integration, body, sign(body, secret, `${integration}-captured`));
    expect(first.status).toBe(202);
    for (const id of ['attacker-chosen-1', 'attacker-chosen-2']) {
      const replay = await t.post(integration, body, sign(body, secret, id));
      expect(replay).toMatchObject({ status: 200, body: { ...first.body, duplicate: true } });
    }
    // One set of jobs: no message but the first delivery's reached the queue (no worker runs here).
    expect((await queued()) - before).toBe(first.body.jobs.length);
    const records = await Promise.all(first.body.jobs.map((job) => t.stack.jobs.getJob(job.jobId)));
    expect(records.every((record) => record?.deliveryId === `${integration}-captured`)).toBe(true);
    // A genuinely new delivery (other bytes) is accepted.
    const edited = Buffer.from(`${body.toString('utf8')}\n`);
    expect((await t.post(integration, edited, sign(edited, secret, 'next-delivery'))).status).toBe(202);
  },
);
