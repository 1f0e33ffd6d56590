/** Rendering `storage.keyPattern` into S3 keys that no sender value can climb out of. */
import { jobKeyPrefix, type KeyValues, renderKey, safeSegment } from '../../../functions/core/storage-key';

const values: KeyValues = {
  integration: 'notes',
  rule: 'invoice',
  jobId: 'job-1',
  deliveryId: 'd-1',
  documentId: 'doc-1',
  templateId: '9001',
  fileId: 'f-1',
  filename: 'invoice.pdf',
  at: new Date('2026-03-07T04:05:06.000Z'),
};

describe('renderKey', () => {
  it('fills every placeholder, with UTC date parts zero-padded', () => {
    expect(
      renderKey(
        '{integration}/{rule}/{yyyy}/{MM}/{dd}/{HH}{mm}/{jobId}-{deliveryId}-{documentId}-{templateId}-{templateFileId}-{fileId}-{filename}',
        { ...values, templateFileId: '90011' },
      ),
    ).toBe('notes/invoice/2026/03/07/0405/job-1-d-1-doc-1-9001-90011-f-1-invoice.pdf');
  });

  it('leaves unknown placeholders as written and an absent template file id empty', () => {
    expect(renderKey('{integration}/{unknown}/{templateFileId}', values)).toBe('notes/{unknown}/_');
  });

  it('keeps a crafted filename or delivery id inside its segment', () => {
    const key = renderKey('docs/{deliveryId}/{filename}', {
      ...values,
      deliveryId: '../../etc',
      filename: 'a/..\\b\u0000\u001f.pdf',
    });
    expect(key).toBe('docs/.._.._etc/a_.._b.pdf');
    expect(key.split('/')).toHaveLength(3);
  });
});

describe('safeSegment', () => {
  it.each([
    ['', '_'],
    ['.', '_'],
    ['..', '_'],
    ['  \u0007 ', '_'],
    ['a/b', 'a_b'],
    [' padded ', 'padded'],
  ])('makes %p into %p', (value, safe) => {
    expect(safeSegment(value)).toBe(safe);
  });

  it('cuts a segment at 200 characters', () => {
    expect(safeSegment('x'.repeat(500))).toHaveLength(200);
  });
});

describe('jobKeyPrefix', () => {
  it('is the pattern up to its first document placeholder, rendered, when that part names the job', () => {
    expect(jobKeyPrefix('{integration}/{yyyy}/{MM}/{dd}/{jobId}/{filename}', values)).toBe(
      'notes/2026/03/07/job-1/',
    );
    expect(jobKeyPrefix('{rule}/{jobId}-{documentId}.pdf', values)).toBe('invoice/job-1-');
    // No document placeholder: every key of the job is fixed, and it is its own prefix.
    expect(jobKeyPrefix('{integration}/{jobId}.pdf', values)).toBe('notes/job-1.pdf');
  });

  it('is undefined when a document placeholder comes before the job', () => {
    expect(jobKeyPrefix('{integration}/{documentId}/{jobId}/{filename}', values)).toBeUndefined();
    expect(jobKeyPrefix('{templateId}/{jobId}/{filename}', values)).toBeUndefined();
    expect(jobKeyPrefix('{integration}/{fileId}', values)).toBeUndefined();
  });
});
