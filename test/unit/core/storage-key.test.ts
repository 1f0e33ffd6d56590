import { MAX_SEGMENT_CODE_POINTS, renderKey, safeSegment } from '../../../functions/core/storage-key';

const values = {
  integration: 'notes',
  rule: 'invoice',
  jobId: 'job-1',
  deliveryId: 'd/1',
  documentId: 'doc-1',
  templateId: '9001',
  fileId: 'f-1',
  filename: '../../etc/passwd',
  at: new Date(Date.UTC(2026, 0, 2, 3, 4)),
};

describe('renderKey', () => {
  it('fills every placeholder, dates in UTC, and leaves unknown ones as written', () => {
    expect(
      renderKey(
        '{integration}/{rule}/{yyyy}/{MM}/{dd}/{HH}{mm}/{jobId}/{deliveryId}/{documentId}/{templateId}-{templateFileId}/{fileId}/{filename}/{other}',
        values,
      ),
    ).toBe('notes/invoice/2026/01/02/0304/job-1/d_1/doc-1/9001-_/f-1/.._.._etc_passwd/{other}');
  });
});

describe('safeSegment', () => {
  it('cannot climb out of its segment', () => {
    expect(safeSegment('..')).toBe('_');
    expect(safeSegment(' . ')).toBe('_');
    expect(safeSegment('a\\\\b/c')).toBe('a__b_c');
  });

  it('drops control and format characters: bidi overrides, zero-width ones, lone surrogates', () => {
    expect(safeSegment('in\u0000vo\u001fice\u007f')).toBe('invoice');
    expect(safeSegment('evil\u202Efdp.exe')).toBe('evilfdp.exe');
    expect(safeSegment('zero\u200Bwidth\uFEFF')).toBe('zerowidth');
    expect(safeSegment('half\uD83D')).toBe('half');
  });

  it('cuts by code point, never inside a character, so the key stays valid UTF-8', () => {
    const emoji = '😀'.repeat(MAX_SEGMENT_CODE_POINTS + 5);
    const cut = safeSegment(emoji);
    expect(Array.from(cut)).toHaveLength(MAX_SEGMENT_CODE_POINTS);
    expect(() => encodeURIComponent(cut)).not.toThrow();
    const mixed = `${'a'.repeat(199)}😀😀`;
    expect(safeSegment(mixed)).toBe(`${'a'.repeat(199)}😀`);
  });
});
