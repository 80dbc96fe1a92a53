import { describe, expect, it } from 'vitest';
import { LinkRateMeter, type PendingReliable, planAbandonments } from './abandonment';

const LADDER_BYTES = [100_000, 200_000, 400_000, 800_000];

function pending(deadline: number, quality: number, remainingBytes = LADDER_BYTES[quality]): PendingReliable {
  return { deadline, quality, remainingBytes, bytesAtQuality: LADDER_BYTES };
}

describe('planAbandonments', () => {
  it('keeps a request that arrives in time', () => {
    expect(planAbandonments([pending(2, 3)], 0, 800_000, 1)).toEqual([]);
  });

  it('replaces a late request by the highest quality that still arrives in time', () => {
    // 800 kB at 300 kB/s takes 2.7 s, 1 s is left: 200 kB (0.67 s) fits, 400 kB does not.
    expect(planAbandonments([pending(1, 3)], 0, 300_000, 1)).toEqual([{ index: 0, quality: 1 }]);
  });

  it('replaces by a quality the rate sustains, not one that only fits by spending the buffer', () => {
    // 2 s to the deadline, 800 kB would take 2.7 s: 400 kB would arrive in 1.3 s, but one segment
    // of it per second needs 400 kB/s; 300 kB/s sustains 200 kB per segment.
    expect(planAbandonments([pending(2, 3)], 0, 300_000, 1)).toEqual([{ index: 0, quality: 1 }]);
  });

  it('falls back to the lowest quality when none arrives in time', () => {
    expect(planAbandonments([pending(0.1, 3)], 0, 300_000, 1)).toEqual([{ index: 0, quality: 0 }]);
  });

  it('counts the bytes queued before a request', () => {
    // Alone the second request (400 kB, 0.8 s) would make its deadline at 1 s; behind the first
    // (400 kB more) it would not, and at quality 0 it would (0.8 + 0.2 s).
    const list = [pending(0.9, 2), pending(1, 2)];
    expect(planAbandonments(list, 0, 500_000, 1)).toEqual([{ index: 1, quality: 0 }]);
  });

  it('counts a replacement, not the request it replaced, for the requests behind it', () => {
    // The first request is cut from 800 kB to 100 kB; the second (400 kB, 2 s) then fits behind it.
    const list = [pending(0.5, 3), pending(2.5, 2)];
    expect(planAbandonments(list, 0, 250_000, 1)).toEqual([{ index: 0, quality: 0 }]);
  });

  it('never replaces a request that has less left than a lower quality would cost', () => {
    expect(planAbandonments([pending(0.1, 3, 50_000)], 0, 100_000, 1)).toEqual([]);
  });

  it('never replaces the lowest quality, and does nothing without a rate', () => {
    expect(planAbandonments([pending(0.1, 0)], 0, 1000, 1)).toEqual([]);
    expect(planAbandonments([pending(0.1, 3)], 0, 0, 1)).toEqual([]);
  });
});

describe('LinkRateMeter', () => {
  it('gives no rate until the link has been busy long enough', () => {
    const meter = new LinkRateMeter(1, 0.3);
    meter.record(0, 0, true);
    meter.record(0.2, 20_000, true);
    expect(meter.rate()).toBeNull();
    meter.record(0.4, 40_000, true);
    expect(meter.rate()).toBeCloseTo(100_000);
  });

  it('looks back one window only', () => {
    const meter = new LinkRateMeter(1, 0.3);
    for (let i = 0; i <= 20; i++) meter.record(i * 0.1, i < 10 ? i * 100_000 : 900_000 + (i - 9) * 10_000, true);
    // The last second carried 10 kB per 100 ms.
    expect(meter.rate()).toBeCloseTo(100_000, -3);
  });

  it('never counts idle time: a new busy span is measured afresh, the rate of the last standing until then', () => {
    const meter = new LinkRateMeter(1, 0.3);
    meter.record(0, 0, true);
    meter.record(0.5, 500_000, true);
    meter.record(0.6, 500_000, false);
    expect(meter.rate()).toBeCloseTo(1_000_000);
    meter.record(2, 500_000, true);
    meter.record(2.1, 510_000, true);
    expect(meter.rate()).toBeCloseTo(1_000_000);
    meter.record(2.5, 550_000, true);
    expect(meter.rate()).toBeCloseTo(100_000);
  });
});
