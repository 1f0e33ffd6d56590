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
  figures(output: string, pattern: RegExp): string[];
  TIERS: ReadonlyArray<{ name: string; figures?: RegExp }>;
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

  it("repeats the soaks' figures, as printSummary prints them through Jest's console", () => {
    const soak = tiers.TIERS.find((tier) => tier.name === 'soak');
    const output = [
      '  console.log',
      '    soak: deliveries=40 stored=38 failed=2 drainSecondsAfterRestart=4.2',
      '',
      '      at printSummary (test/e2e/helpers/reliability.ts:233:11)',
      '    soak-crash: deliveries=30 createCalls=41',
      'a soak: not=this line',
    ].join('\n');
    expect(tiers.figures(output, soak?.figures as RegExp)).toEqual([
      'soak: deliveries=40 stored=38 failed=2 drainSecondsAfterRestart=4.2',
      'soak-crash: deliveries=30 createCalls=41',
    ]);
  });
});
