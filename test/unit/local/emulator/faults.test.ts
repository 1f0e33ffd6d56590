import { defaultFaultSettings, FaultDice, mergeFaultSettings } from '../../../../local/emulator/faults';

describe('fault settings', () => {
  it('default to no fault and the given link lifetime', () => {
    expect(defaultFaultSettings(3_600_000)).toEqual({
      rate429: 0,
      retryAfterSeconds: 0,
      rate5xx: 0,
      latencyMs: 0,
      generationLatencyMs: 0,
      downloadFailRate: 0,
      downloadTruncateRate: 0,
      linkTtlMs: 3_600_000,
    });
  });

  it('merge a partial patch over the current settings', () => {
    const merged = mergeFaultSettings(defaultFaultSettings(1000), {
      rate429: 0.5,
      failNext: { count: 2, status: 503 },
    });
    expect(merged).toMatchObject({ rate429: 0.5, linkTtlMs: 1000, failNext: { count: 2, status: 503 } });
  });

  it('drop failNext once its count is 0', () => {
    const merged = mergeFaultSettings(defaultFaultSettings(1000), { failNext: { count: 0, status: 500 } });
    expect(merged.failNext).toBeUndefined();
  });

  it.each([
    [{ rate429: 1.5 }],
    [{ latencyMs: -1 }],
    [{ failNext: { count: 1, status: 200 } }],
    [{ unknown: 1 }],
  ])('reject %j', (patch) => {
    expect(() => mergeFaultSettings(defaultFaultSettings(1000), patch)).toThrow(/invalid fault settings/);
  });
});

describe('fault dice', () => {
  it('give the same sequence for the same seed', () => {
    const a = new FaultDice(42);
    const b = new FaultDice(42);
    const rolls = (d: FaultDice): number[] => Array.from({ length: 20 }, () => d.next());
    expect(rolls(a)).toEqual(rolls(b));
  });

  it('hit a rate close to the requested one', () => {
    const dice = new FaultDice(7);
    const hits = Array.from({ length: 10_000 }, () => dice.chance(0.3)).filter(Boolean).length;
    expect(hits).toBeGreaterThan(2_700);
    expect(hits).toBeLessThan(3_300);
  });

  it('do not roll for rates of 0 or 1, so disabled faults do not shift the sequence', () => {
    const a = new FaultDice(9);
    const b = new FaultDice(9);
    expect(a.chance(0)).toBe(false);
    expect(a.chance(1)).toBe(true);
    expect(a.next()).toBe(b.next());
  });
});
