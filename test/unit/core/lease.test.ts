import { holdLease } from '../../../functions/core/lease';
import { memoryLog } from './support';

describe('holdLease', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('renews the lease and the message every third of the lease until stopped', async () => {
    const renewLease = jest.fn(async () => true);
    const extend = jest.fn(async () => undefined);
    const heartbeat = holdLease(
      { jobs: { renewLease }, log: memoryLog(), leaseMs: 30_000, now: () => 1000 },
      'j',
      'm',
      extend,
    );
    await jest.advanceTimersByTimeAsync(25_000);
    expect(renewLease).toHaveBeenCalledTimes(2);
    expect(renewLease).toHaveBeenLastCalledWith('j', 'm', 31_000);
    expect(extend).toHaveBeenCalledWith(30);
    await heartbeat.stop();
    await jest.advanceTimersByTimeAsync(60_000);
    expect(renewLease).toHaveBeenCalledTimes(2);
  });

  it('logs a failed renewal and tries again at the next beat', async () => {
    const log = memoryLog();
    const renewLease = jest.fn().mockRejectedValueOnce(new Error('down')).mockResolvedValue(true);
    const extend = jest.fn(async () => undefined);
    const heartbeat = holdLease({ jobs: { renewLease }, log, leaseMs: 3_000 }, 'j', 'm', extend);
    await jest.advanceTimersByTimeAsync(2_000);
    expect(renewLease).toHaveBeenCalledTimes(2);
    expect(extend).toHaveBeenCalledTimes(1);
    expect(log.lines.map((l) => l.message)).toEqual(['could not renew the lease']);
    await heartbeat.stop();
  });

  it('stops renewing, and extending the message, once the lease is found lost', async () => {
    const log = memoryLog();
    const renewLease = jest.fn(async () => false);
    const extend = jest.fn(async () => undefined);
    const heartbeat = holdLease({ jobs: { renewLease }, log, leaseMs: 3_000 }, 'j', 'm', extend);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(renewLease).toHaveBeenCalledTimes(1);
    expect(extend).not.toHaveBeenCalled();
    expect(log.lines.map((l) => [l.level, l.message])).toEqual([
      ['info', 'lease no longer held; renewals stopped'],
    ]);
    await heartbeat.stop();
  });
});
