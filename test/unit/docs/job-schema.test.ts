/**
 * The jobs API's JSON Schema (docs/api/job.schema.json), the job view the API answers and the README say the
 * same thing: the same statuses, the same properties, `error` on failed jobs only, `lastError` never on a
 * stored one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type JobRecord, type JobStatus, newJobRecord } from '../../../functions/core/job';
import { type JobFileView, type JobView, toJobView } from '../../../functions/core/job-view';

const root = join(__dirname, '../../..');
const schema = JSON.parse(readFileSync(join(root, 'docs/api/job.schema.json'), 'utf8')) as {
  required: string[];
  properties: Record<string, { enum?: string[]; items?: { properties: Record<string, unknown> } }>;
};

// Exhaustive by type: adding a status or a view property without listing it here fails the typecheck.
const STATUSES: Record<JobStatus, true> = {
  queued: true,
  processing: true,
  created: true,
  stored: true,
  failed: true,
};
const VIEW_KEYS: Record<keyof JobView, true> = {
  jobId: true,
  integration: true,
  rule: true,
  deliveryId: true,
  status: true,
  attempts: true,
  receivedAt: true,
  updatedAt: true,
  document: true,
  files: true,
  error: true,
  lastError: true,
  attemptErrors: true,
};
const FILE_KEYS: Record<keyof JobFileView, true> = {
  bucket: true,
  key: true,
  size: true,
  sha256: true,
  mimeType: true,
  filename: true,
  downloadUrl: true,
};

/** A stored job with one file, whose last attempt had met an error. */
function storedJob(): JobRecord {
  const job = newJobRecord('notes', 'd-1', '2026-01-01T00:00:00.000Z', Date.parse('2026-01-01T00:00:00Z'), {
    jobId: 'job-1',
    rule: 'note',
    templateId: '9003',
  });
  return {
    ...job,
    status: 'stored',
    attempts: 2,
    document: { id: 'doc-1', name: 'Note', templateId: '9003' } as JobRecord['document'],
    files: [
      {
        fileId: 'f-1',
        filename: 'note.docx',
        mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        size: 10,
        storedSize: 10,
        sha256: 'a'.repeat(64),
        bucket: 'documents',
        key: 'notes/job-1/note.docx',
        storedAt: '2026-01-01T00:00:01.000Z',
      },
    ] as JobRecord['files'],
    lastError: { code: 'DOCGEN_UNAVAILABLE', message: 'the service answered 503' },
  };
}

describe('the jobs API schema', () => {
  it('lists the statuses of the job state machine', () => {
    expect(schema.properties.status?.enum).toEqual(Object.keys(STATUSES));
  });

  it('has exactly the job view’s properties, and its files the file view’s', () => {
    expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(VIEW_KEYS).sort());
    expect(Object.keys(schema.properties.files?.items?.properties ?? {}).sort()).toEqual(
      Object.keys(FILE_KEYS).sort(),
    );
  });

  it('requires what every view carries', async () => {
    const view = (await toJobView(storedJob(), async () => 'https://link')) as unknown as Record<
      string,
      unknown
    >;
    for (const name of schema.required)
      expect({ name, present: name in view }).toEqual({ name, present: true });
    expect(view.lastError).toBeUndefined();
  });

  it('is what the README and the operations guide name', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const operations = readFileSync(join(root, 'docs/operations-cli.md'), 'utf8');
    const apiRow = readme.split('\n').find((line) => line.startsWith('| `GET /v1/jobs/{jobId}`')) ?? '';
    for (const status of Object.keys(STATUSES))
      expect({ status, inReadme: apiRow.includes(`\`${status}\``) }).toEqual({ status, inReadme: true });
    for (const name of Object.keys(VIEW_KEYS))
      expect({ name, inReadme: apiRow.includes(name) }).toEqual({ name, inReadme: true });
    expect(apiRow).toContain('docs/api/job.schema.json');
    expect(operations).toContain('lastError');
  });
});
