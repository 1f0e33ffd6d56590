/**
 * Payloads aimed at JSONata's built-ins: a width of 300,000,000 handed to `$pad`, and `$sort` over 60,000
 * items. The stack stays up, each such job ends (the `$pad` one failed, with a reason), and a normal delivery
 * right after is stored.
 */
import { parseConfig } from '../../functions/config/load';
import { startTestStack, type TestStack } from './helpers/stack';

jest.setTimeout(90_000);

let t: TestStack;

const config = parseConfig(`service:
  baseUrl: http://127.0.0.1:9
  apiKeySecret: docrelay/service-api-key
ingest:
  maxBodyBytes: 4000000
integrations:
  - id: hostile
    verify: { scheme: none, allowUnsigned: true }
    documents:
      - name: padded
        when: "kind = 'pad'"
        template: { id: "9003" }
        data: { Title: "$pad(name, width)" }
      - name: sorted
        when: "kind = 'sort'"
        template: { id: "9003" }
        data: { Title: "name", Body: "$join($sort(items.sku), ',')" }
      - name: normal
        when: "kind = 'normal'"
        template: { id: "9003" }
        data: { Title: "name" }
`);

beforeAll(async () => {
  t = await startTestStack({ config });
});

afterAll(async () => {
  await t?.dispose();
});

const post = (body: unknown) =>
  t.post('hostile', Buffer.from(JSON.stringify(body)), { 'content-type': 'application/json' });

it('fails the $pad job with a reason, ends the $sort job, and stores a normal delivery after them', async () => {
  const pad = await post({ kind: 'pad', name: 'x', width: 300_000_000 });
  const items = Array.from({ length: 60_000 }, (_, i) => ({ sku: `SKU-${(i * 7919) % 30_000}` }));
  const sort = await post({ kind: 'sort', name: 'sorted', items });
  expect([pad.status, sort.status]).toEqual([202, 202]);

  const [padded] = await t.waitForJobs([pad.body.jobs[0]?.jobId as string], { timeoutMs: 60_000 });
  expect(padded).toMatchObject({ status: 'failed', error: { code: 'MAPPING_TOO_LARGE' } });
  expect(padded?.error?.message).toMatch(/\$pad|too large|limit/i);
  const [sorted] = await t.waitForJobs([sort.body.jobs[0]?.jobId as string], { timeoutMs: 60_000 });
  expect(['stored', 'failed']).toContain(sorted?.status);
  if (sorted?.status === 'failed') expect(sorted.error?.message).toMatch(/sort|too large|limit/i);

  // Still up, and still working.
  const normal = await post({ kind: 'normal', name: 'after the storm' });
  const [stored] = await t.waitForJobs([normal.body.jobs[0]?.jobId as string]);
  expect(stored?.status).toBe('stored');
  const file = stored?.files[0];
  const object = await t.readObject(file?.bucket as string, file?.key as string);
  expect(object.bytes.toString('utf8')).toContain('after the storm');
});
