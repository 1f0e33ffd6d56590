/** The job reset behind `replay` and `dlq redrive`: which jobs may run again, and what the reset writes. */

import type { DynamoJobRepository } from '../../../functions/adapters/dynamodb/job-table';
import type { JobRecord } from '../../../functions/core/job';
import {
  REPLAY_PICKUP_MS,
  ReplayRefusedError,
  replayRefusal,
  resetJobForReplay,
} from '../../../functions/core/replay';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');

const failedJob = (overrides: Partial<JobRecord> = {}): JobRecord => ({
  jobId: 'job-1',
  integration: 'github-releases',
  rule: 'release-notes',
  deliveryId: 'd-1',
  status: 'failed',
  attempts: 2,
  documentsRequested: 1,
  receivedAt: '2026-03-01T11:00:00.000Z',
  createdAt: '2026-03-01T11:00:00.000Z',
  updatedAt: '2026-03-01T11:01:00.000Z',
  templateId: '9002',
  templateFileId: '90021',
  document: {
    id: 'doc-1',
    name: 'Release',
    templateId: '9002',
    createdAt: '2026-03-01T11:00:30.000Z',
    linksExpireAt: '2026-03-01T11:55:30.000Z',
  },
  files: [{ fileId: 'f-1', filename: 'notes.docx', mimeType: 'application/octet-stream', size: 10 }],
  error: { code: 'DOCGEN_BAD_REQUEST', message: 'the service refused the request' },
  version: 7,
  ...overrides,
});

/** A store that records the update it was asked for and applies it as DynamoJobRepository.updateJob does. */
function recordingStore(): { store: DynamoJobRepository; updates: Array<Partial<JobRecord>> } {
  const updates: Array<Partial<JobRecord>> = [];
  const store = {
    updateJob: async (job: JobRecord, changes: Partial<JobRecord>): Promise<JobRecord> => {
      updates.push(changes);
      const next: Record<string, unknown> = { ...job, ...changes, version: job.version + 1 };
      for (const [key, value] of Object.entries(changes)) if (value === undefined) delete next[key];
      return next as unknown as JobRecord;
    },
  } as unknown as DynamoJobRepository;
  return { store, updates };
}

describe('replayRefusal', () => {
  it('accepts a failed job, fresh or not', () => {
    expect(replayRefusal(failedJob())).toBeUndefined();
    expect(replayRefusal(failedJob(), { fresh: true })).toBeUndefined();
  });

  it('accepts a stored job only fresh', () => {
    expect(replayRefusal(failedJob({ status: 'stored' }))).toMatch(/stored already; replay --fresh/);
    expect(replayRefusal(failedJob({ status: 'stored' }), { fresh: true })).toBeUndefined();
  });

  it.each(['queued', 'processing', 'created'] as const)(
    'refuses a %s job: it is still in progress',
    (status) => {
      expect(replayRefusal(failedJob({ status }), { fresh: true })).toMatch(
        new RegExp(`is ${status}: it is still`),
      );
    },
  );
});

describe('resetJobForReplay', () => {
  it('queues a failed job from its checkpoint: error cleared and kept as lastError, lease renewed', async () => {
    const { store, updates } = recordingStore();
    const reset = await resetJobForReplay(store, failedJob(), { now: () => NOW });
    expect(reset.status).toBe('queued');
    expect(reset.error).toBeUndefined();
    expect(reset.lastError).toEqual({
      code: 'DOCGEN_BAD_REQUEST',
      message: 'the service refused the request',
    });
    expect(reset.leaseUntil).toBe(NOW + REPLAY_PICKUP_MS);
    expect(reset.document?.id).toBe('doc-1');
    expect(reset.files).toHaveLength(1);
    expect(updates).toHaveLength(1);
  });

  it('resumes copying (created) when the document still has live links and files left', async () => {
    const { store } = recordingStore();
    const job = failedJob({
      document: {
        ...(failedJob().document as NonNullable<JobRecord['document']>),
        sealedLinks: 'sealed',
        linksExpireAt: new Date(NOW + 60_000).toISOString(),
      },
    });
    expect((await resetJobForReplay(store, job, { now: () => NOW })).status).toBe('created');
    expect((await resetJobForReplay(store, job, { now: () => NOW + 120_000 })).status).toBe('queued');
  });

  it('drops the document and files with fresh, also for a stored job', async () => {
    const { store } = recordingStore();
    const stored = failedJob({ status: 'stored', error: undefined });
    const reset = await resetJobForReplay(store, stored, { fresh: true, now: () => NOW });
    expect(reset.status).toBe('queued');
    expect(reset.document).toBeUndefined();
    expect(reset.files).toEqual([]);
  });

  it('refuses an open job without writing', async () => {
    const { store, updates } = recordingStore();
    await expect(resetJobForReplay(store, failedJob({ status: 'processing' }))).rejects.toBeInstanceOf(
      ReplayRefusedError,
    );
    expect(updates).toHaveLength(0);
  });
});
