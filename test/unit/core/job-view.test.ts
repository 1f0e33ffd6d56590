/** The public view of a job (`GET /v1/jobs/{jobId}`, `docrelay jobs show`). */
import { type JobRecord, newJobRecord } from '../../../functions/core/job';
import { toJobView } from '../../../functions/core/job-view';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');

const base = (): JobRecord =>
  newJobRecord('notes', 'd-1', '2026-03-01T11:59:00.000Z', NOW, {
    jobId: 'job-1',
    rule: 'invoice',
    templateId: '9001',
  });

const created = (): JobRecord => ({
  ...base(),
  status: 'created',
  attempts: 2,
  document: {
    id: 'doc-1',
    name: 'Invoice',
    templateId: '9001',
    templateFileId: '90011',
    createdAt: '2026-03-01T12:00:01.000Z',
    linksExpireAt: '2026-03-01T12:55:00.000Z',
    sealedLinks: 'sealed-secret-links',
  },
  files: [
    { fileId: 'f-1', filename: 'a.pdf', mimeType: 'application/pdf', size: 10 },
    {
      fileId: 'f-2',
      filename: 'b.pdf',
      mimeType: 'application/pdf',
      size: 20,
      bucket: 'documents',
      key: 'notes/b.pdf',
      sha256: 'cd'.repeat(32),
      storedSize: 21,
      storedAt: '2026-03-01T12:00:02.000Z',
    },
  ],
  lastError: { code: 'STORAGE_WRITE_FAILED', message: 'could not write' },
  leaseOwner: 'm-1',
});

describe('toJobView', () => {
  it('shows a new job with no document and no files', async () => {
    expect(await toJobView(base())).toEqual({
      jobId: 'job-1',
      integration: 'notes',
      rule: 'invoice',
      deliveryId: 'd-1',
      status: 'queued',
      attempts: 0,
      receivedAt: '2026-03-01T11:59:00.000Z',
      updatedAt: '2026-03-01T12:00:00.000Z',
      files: [],
    });
  });

  it('lists only stored files, with their stored size, and never the sealed links or lease', async () => {
    const presign = jest.fn(async (bucket: string, key: string) => `https://${bucket}.example/${key}?sig=1`);
    const view = await toJobView(created(), presign);
    expect(view.document).toEqual({
      id: 'doc-1',
      name: 'Invoice',
      templateId: '9001',
      templateFileId: '90011',
    });
    expect(view.files).toEqual([
      {
        bucket: 'documents',
        key: 'notes/b.pdf',
        size: 21,
        sha256: 'cd'.repeat(32),
        mimeType: 'application/pdf',
        filename: 'b.pdf',
        downloadUrl: 'https://documents.example/notes/b.pdf?sig=1',
      },
    ]);
    expect(presign).toHaveBeenCalledTimes(1);
    expect(view.lastError).toEqual({ code: 'STORAGE_WRITE_FAILED', message: 'could not write' });
    expect(JSON.stringify(view)).not.toContain('sealed-secret-links');
    expect(view).not.toHaveProperty('leaseOwner');
  });

  it('shows files without links when no presigner is given, and falls back to the service size', async () => {
    const job = created();
    const file = job.files[1];
    if (file === undefined) throw new Error('fixture');
    job.files[1] = { ...file, storedSize: undefined, sha256: undefined };
    const { document: _document, ...withoutDocument } = job;
    const view = await toJobView({ ...withoutDocument, files: job.files });
    expect(view.files).toEqual([expect.objectContaining({ size: 20, sha256: '' })]);
    expect(view.files[0]).not.toHaveProperty('downloadUrl');
    expect(view).not.toHaveProperty('document');
  });

  it('shows the error of a failed job, and drops the last error once stored', async () => {
    const failed = {
      ...created(),
      status: 'failed' as const,
      error: { code: 'DOCGEN_BAD_REQUEST', message: 'refused' },
    };
    expect(await toJobView(failed)).toMatchObject({
      error: { code: 'DOCGEN_BAD_REQUEST' },
      lastError: { code: 'STORAGE_WRITE_FAILED' },
    });
    expect(await toJobView({ ...created(), status: 'stored' })).not.toHaveProperty('lastError');
  });
});
