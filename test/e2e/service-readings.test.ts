/**
 * The pipeline through the local stack against each reading of the interface page's ambiguities:
 * create answered 201 or 200 with the link spelled `@api.downloadUrl` or `@api.downloadURL` (and the mixed
 * pairs) stores the file byte-exact; a 413, worded either way, fails the job without retries; a create that
 * the service makes and then answers 503 is retried and the job still stores exactly one object.
 */
import type { ServiceReadings } from '../../local/emulator/readings';
import { faultCount, postNote, storedProblems, waitForFinal } from './helpers/reliability';
import { startTestStack, type TestStack } from './helpers/stack';

jest.setTimeout(60_000);

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack({
    emulator: { seed: 16, bodyLimitBytes: 16 * 1024 },
    visibilityTimeoutSeconds: 5,
    maxReceiveCount: 8,
  });
});

afterAll(async () => {
  await t?.dispose();
});

beforeEach(() => {
  t.emulator.setReadings({
    createStatus: 201,
    linkField: '@api.downloadUrl',
    payloadTooLargeMessage: 'Request entity too large',
  });
  t.emulator.setFaults({ failNext: { count: 0, status: 500 }, failAfterCreateNext: 0, retryAfterSeconds: 0 });
  t.emulator.resetStats();
});

async function noteJob(data: Record<string, unknown>): Promise<string> {
  const answer = await postNote(t, data);
  expect(answer.status).toBe(202);
  expect(answer.body.jobs).toHaveLength(1);
  return answer.body.jobs[0]?.jobId as string;
}

describe.each<[ServiceReadings['createStatus'], ServiceReadings['linkField']]>([
  [200, '@api.downloadURL'],
  [201, '@api.downloadUrl'],
  [200, '@api.downloadUrl'],
  [201, '@api.downloadURL'],
])('create answered %i, link in %s', (createStatus, linkField) => {
  it('stores the generated file byte-exact', async () => {
    t.emulator.setReadings({ createStatus, linkField });
    const jobId = await noteJob({ title: `Reading ${createStatus} ${linkField}`, body: 'Body' });
    const [job] = await waitForFinal(t, [jobId], 45_000);
    expect(job?.status).toBe('stored');
    const stats = t.emulator.stats();
    expect(stats.requests.filter((r) => r.method === 'POST').map((r) => r.status)).toEqual([createStatus]);
    expect(await storedProblems(t, stats, job === undefined ? [] : [job], { wholeBucket: false })).toEqual(
      [],
    );
  });
});

describe.each<ServiceReadings['payloadTooLargeMessage']>(['Request entity too large', 'Payload too large'])(
  'a 413 worded "%s"',
  (message) => {
    it('fails the job once, saying the request was too large', async () => {
      t.emulator.setReadings({ payloadTooLargeMessage: message });
      const jobId = await noteJob({ title: 'Too large', body: 'x'.repeat(32 * 1024) });
      const [job] = await waitForFinal(t, [jobId], 45_000);
      expect(job?.status).toBe('failed');
      expect(job?.error?.code).toBe('DOCGEN_PAYLOAD_TOO_LARGE');
      expect(job?.error?.message).toContain(message);
      expect(t.emulator.stats().requests.filter((r) => r.method === 'POST' && r.status === 413)).toHaveLength(
        1,
      );
    });
  },
);

describe('a create that is made and then answered 503', () => {
  it('is retried, and the job ends stored with one object for its file', async () => {
    t.emulator.setFaults({ failAfterCreateNext: 1 });
    const jobId = await noteJob({ title: 'Ambiguous create', body: 'Body' });
    const [job] = await waitForFinal(t, [jobId], 45_000);
    expect(job?.status).toBe('stored');
    const stats = t.emulator.stats();
    expect(faultCount(stats, 'failAfterCreate')).toBe(1);
    // The service made two temporary documents; the job stored the second one's file, and nothing else.
    expect(stats.createdDocuments).toHaveLength(2);
    expect(job?.document?.id).toBe(stats.createdDocuments[1]?.documentId);
    expect(await storedProblems(t, stats, job === undefined ? [] : [job], { wholeBucket: false })).toEqual(
      [],
    );
  });
});
