/**
 * The soak: every fault at once, and nothing lost, nothing made twice. The service emulator (outside the
 * stacks, as the real service is) answers 20% of API calls 429 with Retry-After and 10% with a 5xx, fails 10%
 * of downloads and truncates 5%, and its links live so briefly that a download retried after a failure finds
 * its link expired. 10% of deliveries arrive twice (some at once), a few are poison on purpose (no title: a
 * MAPPING_ failure), the workers are stopped and started again mid-way, and the whole stack is stopped and a
 * new one started on the same data directory (the queue emulator loses every message).
 *
 * At the end: every accepted job is stored, or failed with the reason the test caused; the service made one
 * document per stored job plus one per expired link; every object in S3 is the service's file byte for byte
 * and nothing else is there; nothing is open or queued; the dead-letter queue holds exactly the poison.
 *
 * Runs alone with `npm run test:soak`; SOAK_DELIVERIES sets its size (default 40, about a minute on 2 cores),
 * SOAK_SEED the fault dice and SOAK_LINK_TTL_MS the links' lifetime (default 900 ms). It prints how long the
 * drain took after the restart, the create-document calls per job (every POST the service answered, faults
 * included) and the regenerations: the figures of bench/analysis.md, "Draining after faults".
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SOAK_FAULTS } from '../../local/emulator/faults';
import { type EmulatorHandle, startEmulator } from '../../local/emulator/server';
import { trustedLinkLifetimeMs } from '../../local/stack/local-stack';
import {
  brief,
  createCalls,
  expectNothingOpen,
  expiredDownloads,
  faultsDrawn,
  jobRecords,
  postNote,
  printSummary,
  soakSettings,
  storedProblems,
  waitForFinal,
  waitForQueueDrained,
} from './helpers/reliability';
import { type Answer, type HookBody, readSample, startTestStack, type TestStack } from './helpers/stack';
import { waitUntil } from './helpers/wait';

const {
  deliveries: DELIVERIES,
  seed: SEED,
  settleMs: SETTLE_MS,
  visibilitySeconds: VISIBILITY_SECONDS,
  retryBaseSeconds: RETRY_BASE_SECONDS,
  linkTtlMs: LINK_TTL_MS,
} = soakSettings({
  sizeVariable: 'SOAK_DELIVERIES',
  deliveries: 40,
  minDeliveries: 10,
  seed: 20_261_122,
  linkTtlMs: 900,
});

jest.setTimeout(SETTLE_MS + 120_000);

const apiKey = 'soak-service-key';
let service: EmulatorHandle;
let dataDir: string;
const stacks: TestStack[] = [];

/** One delivery the test sends: its kind, and whether it is a duplicate sent at once or later. */
interface Planned {
  readonly index: number;
  readonly deliveryId: string;
  readonly kind: 'note' | 'release' | 'poison';
  readonly duplicate?: 'concurrent' | 'later';
}

function plan(count: number): Planned[] {
  return Array.from({ length: count }, (_, index) => {
    const kind = index % 15 === 5 ? 'poison' : index % 6 === 0 ? 'release' : 'note';
    const duplicate = index % 20 === 3 ? 'concurrent' : index % 20 === 13 ? 'later' : undefined;
    return {
      index,
      deliveryId: `soak-${SEED}-${index}`,
      kind,
      ...(duplicate === undefined ? {} : { duplicate }),
    } satisfies Planned;
  });
}

async function startStack(): Promise<TestStack> {
  const stack = await startTestStack({
    dataDir,
    env: { DOCGEN_BASE_URL: service.url, DOCGEN_API_KEY: apiKey },
    // One attempt may wait out several Retry-After answers inside the client; the heartbeat holds the lease.
    visibilityTimeoutSeconds: VISIBILITY_SECONDS,
    retryBaseSeconds: RETRY_BASE_SECONDS,
    maxReceiveCount: 8,
    // The service is outside the stack, so the stack is told how long its links live.
    linkLifetimeMs: trustedLinkLifetimeMs(LINK_TTL_MS),
  });
  stacks.push(stack);
  return stack;
}

beforeAll(async () => {
  service = await startEmulator({
    apiKey,
    seed: SEED,
    faults: {
      ...SOAK_FAULTS,
      // A download in the attempt that made the document is in time; one retried after a failed attempt
      // (at least a second later) or after the client's own backoffs is not: its link has expired.
      linkTtlMs: LINK_TTL_MS,
    },
  });
  dataDir = await mkdtemp(join(tmpdir(), 'docrelay-e2e-soak-'));
});

afterAll(async () => {
  for (const stack of stacks.splice(0)) await stack.stop();
  await service?.stop();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

describe('soak', () => {
  it('loses nothing and makes nothing twice under every fault at once, a worker restart and a stack restart', async () => {
    const planned = plan(DELIVERIES);
    const release = JSON.parse(
      (await readSample('github-release-published.json')).toString('utf8'),
    ) as object;
    const releaseFor = (index: number): Buffer =>
      Buffer.from(JSON.stringify({ ...release, soakIndex: index }));
    const answers = new Map<string, Answer<HookBody>[]>();
    let t = await startStack();

    const send = async (delivery: Planned): Promise<Answer<HookBody>> => {
      const answer =
        delivery.kind === 'release'
          ? // Each release delivery is an event of its own, so its bytes differ (the signed body dedupes too).
            await t.postGithub(releaseFor(delivery.index), delivery.deliveryId)
          : await postNote(
              t,
              delivery.kind === 'poison'
                ? { body: `poison ${delivery.index}: no title` }
                : { title: `Soak ${delivery.index}`, body: `Note ${delivery.index} of the soak` },
              delivery.deliveryId,
            );
      answers.set(delivery.deliveryId, [...(answers.get(delivery.deliveryId) ?? []), answer]);
      return answer;
    };
    /** Sends deliveries eight at a time; a concurrent duplicate goes out together with its original. */
    const sendAll = async (deliveries: readonly Planned[]): Promise<void> => {
      for (let i = 0; i < deliveries.length; i += 8) {
        await Promise.all(
          deliveries
            .slice(i, i + 8)
            .flatMap((d) => (d.duplicate === 'concurrent' ? [send(d), send(d), send(d)] : [send(d)])),
        );
      }
    };
    const acceptedJobIds = (): string[] =>
      [...answers.values()]
        .flatMap((list) => list.find((a) => a.status === 202)?.body.jobs ?? [])
        .map((j) => j.jobId);
    const finalCount = async (): Promise<number> =>
      (await jobRecords(t, acceptedJobIds())).filter(
        (job) => job.status === 'stored' || job.status === 'failed',
      ).length;
    const third = Math.ceil(DELIVERIES / 3);
    const [first, second, last] = [
      planned.slice(0, third),
      planned.slice(third, 2 * third),
      planned.slice(2 * third),
    ] as [Planned[], Planned[], Planned[]];

    // Phase 1, then a worker restart with deliveries arriving while no worker runs.
    await sendAll(first);
    await waitUntil('a few jobs to end', async () => ((await finalCount()) >= 3 ? true : undefined), {
      timeoutMs: SETTLE_MS,
    });
    await t.stack.stopWorkers();
    await sendAll(second.slice(0, Math.ceil(second.length / 2)));
    t.stack.startWorkers();
    await sendAll(second.slice(Math.ceil(second.length / 2)));

    // Phase 2: the whole stack stops mid-flight (its queue and DLQ emulator forget every message) and a new
    // one starts on the same data; later duplicates of earlier deliveries meet the durable dedupe keys.
    const beforeRestart = acceptedJobIds().length;
    await waitUntil(
      'a third of the jobs to end',
      async () => ((await finalCount()) >= Math.ceil(beforeRestart / 3) ? true : undefined),
      { timeoutMs: SETTLE_MS },
    );
    const openAtRestart = beforeRestart - (await finalCount());
    await t.stop();
    const restartedAtMs = Date.now();
    const restartedAt = new Date(restartedAtMs).toISOString();
    t = await startStack();
    await sendAll(last);
    await sendAll(planned.filter((d) => d.duplicate === 'later'));

    const jobIds = acceptedJobIds();
    const jobs = await waitForFinal(t, jobIds, SETTLE_MS);
    const drainedAtMs = Date.now();
    await waitForQueueDrained(t, 60_000);
    const stats = service.stats();
    const deadLetters = await t.drainDeadLetters();

    // Counts, printed whatever the assertions say.
    const stored = jobs.filter((job) => job.status === 'stored');
    const failed = jobs.filter((job) => job.status === 'failed');
    const expired = expiredDownloads(stats);
    const regenerations = stored.reduce((sum, job) => sum + job.documentsRequested - 1, 0);
    const allAnswers = [...answers.values()].flat();
    const summary = {
      seed: SEED,
      deliveries: DELIVERIES,
      posts: allAnswers.length,
      accepted: allAnswers.filter((a) => a.status === 202).length,
      duplicates: allAnswers.filter((a) => a.body.duplicate === true).length,
      jobs: jobs.length,
      stored: stored.length,
      failed: failed.length,
      openAtRestart,
      documents: stats.documentsCreated,
      linkTtlMs: LINK_TTL_MS,
      drainSecondsAfterRestart: Math.round((drainedAtMs - restartedAtMs) / 100) / 10,
      createCalls: createCalls(stats),
      createCallsPerJob: Math.round((createCalls(stats) / jobs.length) * 100) / 100,
      regenerations,
      expiredLinks: expired,
      ...faultsDrawn(stats),
      maxAttempts: Math.max(...jobs.map((job) => job.attempts)),
      dlq: deadLetters.length,
    };
    printSummary('soak', summary);

    // Every POST was accepted or answered as a duplicate with the same jobs.
    for (const [deliveryId, list] of answers) {
      const original = list.filter((a) => a.status === 202);
      expect({ deliveryId, accepted: original.length }).toEqual({ deliveryId, accepted: 1 });
      for (const again of list.filter((a) => a.status !== 202)) {
        expect({
          deliveryId,
          status: again.status,
          jobs: again.body.jobs,
          duplicate: again.body.duplicate,
        }).toEqual({ deliveryId, status: 200, jobs: original[0]?.body.jobs, duplicate: true });
      }
    }
    // The faults did happen.
    expect(summary['429']).toBeGreaterThan(0);
    expect(summary['5xx'] + summary.downloadFail + summary.truncated).toBeGreaterThan(0);
    // Every job ended: stored, or failed with the mapping error the test caused (and only those failed).
    const poisonJobIds = new Set(
      planned
        .filter((d) => d.kind === 'poison')
        .flatMap((d) => answers.get(d.deliveryId)?.find((a) => a.status === 202)?.body.jobs ?? [])
        .map((j) => j.jobId),
    );
    const unexpected = jobs.filter((job) =>
      poisonJobIds.has(job.jobId)
        ? !(job.status === 'failed' && job.error?.code === 'MAPPING_REQUIRED_MISSING')
        : job.status !== 'stored',
    );
    expect(unexpected.map(brief)).toEqual([]);
    expect(failed.length).toBe(poisonJobIds.size);
    // Every document the service made is one a job asked for, and a job asks again only for expired links:
    // each link that answered 404 made one, and a worker that finds its checkpointed links past their expiry
    // asks without trying them (how many of those there are depends on the machine's speed, so the count
    // is taken from the jobs' records, not from the clock).
    expect(stats.documentsCreated).toBe(jobs.reduce((sum, job) => sum + job.documentsRequested, 0));
    expect(stats.documentsCreated).toBe(stored.length + regenerations);
    expect(regenerations).toBeGreaterThanOrEqual(expired);
    // What is in S3 is the service's bytes, one object per stored file, nothing more.
    expect(await storedProblems(t, stats, stored)).toEqual([]);
    // Nothing open once the reconciler has marked the deliveries whose grace is over (every job is final, so
    // it sends nothing), nothing queued, and the dead-letter queue holds the poison, each once.
    await expectNothingOpen(t);
    const parked = deadLetters.map((m) => ({
      jobId: (JSON.parse(m.Body ?? '{}') as { jobId?: string }).jobId,
      reason: m.MessageAttributes?.reason?.StringValue,
    }));
    const poisonDetail = jobs
      .filter((job) => poisonJobIds.has(job.jobId))
      .map((job) => `${job.jobId} ${job.status} ${job.updatedAt} attempts=${job.attempts}`);
    expect({ parked: parked.map((p) => p.jobId).sort(), restartedAt, poisonDetail }).toEqual({
      parked: [...poisonJobIds].sort(),
      restartedAt,
      poisonDetail,
    });
    expect(new Set(parked.map((p) => p.reason))).toEqual(new Set(['MAPPING_REQUIRED_MISSING']));
  });
});
