/** The count arithmetic of `npm test`'s tier runner (test/tiers.js), which CI's last line is made of. */
interface Count {
  passed: number;
  failed: number;
  skipped: number;
}
const tiers = require('../../tiers') as {
  lastCount(output: string): Count | undefined;
  tierCount(output: string, exitCode: number, timedOut: boolean): Count;
  total(counts: readonly Count[]): Count;
  format(count: Count): string;
};

describe('the tier runner', () => {
  it('reads the last count line of a Jest run, skipped included', () => {
    const output =
      'PASS unit a.test.ts\n\n3 passed, 0 failed\nTests: 3 passed\n\n12 passed, 2 failed, 1 skipped\n';
    expect(tiers.lastCount(output)).toEqual({ passed: 12, failed: 2, skipped: 1 });
    expect(tiers.lastCount('Found 2 errors.\n')).toBeUndefined();
  });

  it('counts a failed check as one failure with no tests run, and a passed one as nothing', () => {
    expect(tiers.tierCount('lint errors\n', 1, false)).toEqual({ passed: 0, failed: 1, skipped: 0 });
    expect(tiers.tierCount('Checked 500 files\n', 0, false)).toEqual({ passed: 0, failed: 0, skipped: 0 });
  });

  it('counts a Jest run that passed its tests but did not end well (hang cut off, open handle) as failed', () => {
    expect(tiers.tierCount('40 passed, 0 failed\n', 0, true)).toEqual({ passed: 40, failed: 1, skipped: 0 });
    expect(tiers.tierCount('40 passed, 0 failed\n', 1, false)).toEqual({ passed: 40, failed: 1, skipped: 0 });
    expect(tiers.tierCount('40 passed, 3 failed\n', 1, false)).toEqual({ passed: 40, failed: 3, skipped: 0 });
  });

  it('sums the tiers into the closing line', () => {
    const sum = tiers.total([
      { passed: 0, failed: 1, skipped: 0 },
      { passed: 1529, failed: 0, skipped: 0 },
      { passed: 171, failed: 2, skipped: 3 },
    ]);
    expect(tiers.format(sum)).toBe('1700 passed, 3 failed, 3 skipped');
    expect(tiers.format(tiers.total([]))).toBe('0 passed, 0 failed');
  });
});
