import { InvalidTransitionError } from '../../../functions/core/errors';
import {
  applyChanges,
  FIRST_PICKUP_MS,
  isFinal,
  type JobRecord,
  newJobRecord,
  transitions,
} from '../../../functions/core/job';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const queued = (): JobRecord =>
  newJobRecord('notes', 'd-1', '2026-01-01T00:00:00.000Z', NOW, {
    jobId: 'job-1',
    rule: 'invoice',
    templateId: '9001',
  });
const apply = (job: JobRecord, changes: Parameters<typeof applyChanges>[1]): JobRecord =>
  applyChanges(job, changes, new Date(NOW).toISOString());
const document = {
  id: 'doc-1',
  name: 'Invoice',
  templateId: '9001',
  createdAt: '2026-01-01T00:00:00.000Z',
  linksExpireAt: '2026-01-01T00:55:00.000Z',
  sealedLinks: 'sealed',
};
const file = { fileId: 'f-1', filename: 'a.docx', mimeType: 'application/x', size: 3 };

describe('newJobRecord', () => {
  it('makes a queued job with no attempts, due for its first pickup within the pickup window', () => {
    const job = queued();
    expect(job).toMatchObject({ status: 'queued', attempts: 0, version: 0, files: [] });
    expect(job.leaseUntil).toBe(NOW + FIRST_PICKUP_MS);
    expect(job.templateFileId).toBeUndefined();
  });

  it('keeps the template file of a multi-file rule', () => {
    const job = newJobRecord('r', 'd', 'x', NOW, {
      jobId: 'j',
      rule: 'n',
      templateId: '9002',
      templateFileId: '90021',
    });
    expect(job.templateFileId).toBe('90021');
  });
});

describe('the job state machine', () => {
  it('walks the happy path: queued → processing → created → stored', () => {
    let job = queued();
    job = apply(job, transitions.claim(job, 'm-1', NOW + 1000));
    expect(job).toMatchObject({ status: 'processing', attempts: 1, leaseOwner: 'm-1', version: 1 });
    job = apply(job, transitions.created(job, document, [file]));
    expect(job).toMatchObject({ status: 'created', documentsRequested: 1, files: [file] });
    const stored = { ...file, storedAt: 'now', key: 'k', bucket: 'b', sha256: 'h', storedSize: 3 };
    job = apply(job, transitions.fileStored(job, stored));
    expect(job.files).toEqual([stored]);
    // The claim's lease holds through the checkpoints: the heartbeat renews it, not each write.
    expect(job.leaseUntil).toBe(NOW + 1000);
    job = apply(job, transitions.stored(job));
    expect(job.status).toBe('stored');
    expect(job.document?.sealedLinks).toBeUndefined();
    expect(job.leaseOwner).toBeUndefined();
    expect(isFinal(job.status)).toBe(true);
  });

  it('keeps a checkpoint as created when claimed again', () => {
    let job = queued();
    job = apply(job, transitions.claim(job, 'm-1', NOW));
    job = apply(job, transitions.created(job, document, [file]));
    job = apply(job, transitions.claim(job, 'm-2', NOW));
    expect(job).toMatchObject({ status: 'created', attempts: 2, leaseOwner: 'm-2' });
  });

  it('refuses to store while a file is left to copy', () => {
    let job = queued();
    job = apply(job, transitions.claim(job, 'm-1', NOW));
    job = apply(job, transitions.created(job, document, [file]));
    expect(() => transitions.stored(job)).toThrow(InvalidTransitionError);
  });

  it('drops the document when its links expired', () => {
    let job = queued();
    job = apply(job, transitions.claim(job, 'm-1', NOW));
    job = apply(job, transitions.created(job, document, [file]));
    job = apply(job, transitions.linksExpired(job));
    expect(job).toMatchObject({ status: 'processing', files: [] });
    expect(job.document).toBeUndefined();
  });

  it('releases to queued, or to created keeping the checkpoint, counting outage retries', () => {
    let job = queued();
    job = apply(job, transitions.claim(job, 'm-1', NOW));
    const error = { code: 'X', message: 'x' };
    const released = apply(
      job,
      transitions.release(job, { lastError: error, leaseUntil: NOW + 5, outage: true }),
    );
    expect(released).toMatchObject({
      status: 'queued',
      lastError: error,
      outageRetries: 1,
      leaseUntil: NOW + 5,
    });
    expect(released.leaseOwner).toBeUndefined();
    job = apply(job, transitions.created(job, document, [file]));
    const held = apply(job, transitions.release(job, { lastError: error, leaseUntil: NOW, owner: 'm-9' }));
    expect(held).toMatchObject({ status: 'created', leaseOwner: 'm-9' });
    expect(held.outageRetries).toBeUndefined();
  });

  it('fails an open job with its reason, dropping the sealed links', () => {
    let job = queued();
    job = apply(job, transitions.claim(job, 'm-1', NOW));
    job = apply(job, transitions.created(job, document, [file]));
    const failed = apply(
      job,
      transitions.fail(job, { code: 'E', message: 'e' }, { code: 'L', message: 'l' }),
    );
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'E' }, lastError: { code: 'L' } });
    expect(failed.document?.sealedLinks).toBeUndefined();
    expect(failed.leaseUntil).toBeUndefined();
  });

  it('replays a final job from its checkpoint or, fresh, from the start', () => {
    let job = queued();
    job = apply(job, transitions.claim(job, 'm-1', NOW));
    job = apply(job, transitions.created(job, document, [file]));
    const failed = apply(job, transitions.fail(job, { code: 'E', message: 'e' }));
    // The message whose attempt failed it (the lease owner): its return publishes the event again.
    expect(failed.settledBy).toBe('m-1');
    const resumed = apply(
      failed,
      transitions.replay(failed, { fresh: false, resumeCopy: true, leaseUntil: NOW }),
    );
    expect(resumed).toMatchObject({ status: 'created', lastError: { code: 'E' } });
    expect(resumed.error).toBeUndefined();
    // Open again: no message settled it.
    expect(resumed.settledBy).toBeUndefined();
    const fresh = apply(
      failed,
      transitions.replay(failed, { fresh: true, resumeCopy: true, leaseUntil: NOW }),
    );
    expect(fresh).toMatchObject({ status: 'queued', files: [] });
    expect(fresh.document).toBeUndefined();
  });

  it('resends a stranded job with no owner and a new lease', () => {
    const job = { ...queued(), leaseOwner: 'm-dead' };
    expect(transitions.resend(job, NOW + 7)).toEqual({ leaseOwner: undefined, leaseUntil: NOW + 7 });
  });

  it.each([
    ['claim', (j: JobRecord) => transitions.claim(j, 'm', NOW)],
    [
      'release',
      (j: JobRecord) => transitions.release(j, { lastError: { code: 'x', message: 'x' }, leaseUntil: 0 }),
    ],
    ['fail', (j: JobRecord) => transitions.fail(j, { code: 'x', message: 'x' })],
    ['resend', (j: JobRecord) => transitions.resend(j, NOW)],
    ['created', (j: JobRecord) => transitions.created(j, document, [])],
    ['fileStored', (j: JobRecord) => transitions.fileStored(j, file)],
    ['linksExpired', (j: JobRecord) => transitions.linksExpired(j)],
    ['stored', (j: JobRecord) => transitions.stored(j)],
  ])('refuses %s on a final job', (_name, transition) => {
    const stored = { ...queued(), status: 'stored' as const };
    expect(() => transition(stored)).toThrow(InvalidTransitionError);
  });

  it('refuses to replay an open job', () => {
    expect(() => transitions.replay(queued(), { fresh: true, resumeCopy: false, leaseUntil: NOW })).toThrow(
      /cannot go through "replay" while queued/,
    );
  });

  it('applies changes with a new version, removing what is undefined', () => {
    const job = { ...queued(), lastError: { code: 'x', message: 'x' } };
    const next = applyChanges(job, { lastError: undefined, attempts: 3 }, 'later');
    expect(next).toMatchObject({ version: 1, attempts: 3, updatedAt: 'later' });
    expect('lastError' in next).toBe(false);
  });
});
