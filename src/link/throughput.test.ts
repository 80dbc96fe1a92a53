import { describe, expect, it } from 'vitest';
import { segmentGoodput, ThroughputEstimator } from './throughput';

describe('segmentGoodput', () => {
  it('counts overlapping deliveries once and ignores idle gaps', () => {
    // 2 × 125 000 B over a busy union of 200 ms (0–100 and 900–1000): 10 Mb/s, not 2 Mb/s.
    const g = segmentGoodput([
      { receivedBytes: 125_000, startMs: 0, endMs: 100 },
      { receivedBytes: 125_000, startMs: 900, endMs: 1000 },
    ]);
    expect(g).toBeCloseTo(10e6);
  });
  it('returns null when nothing was in flight', () => {
    expect(segmentGoodput([])).toBeNull();
  });
  it('takes the round trip off each busy period: on a 100-ms path a 10-Mbit/s link reads as 10, not 8', () => {
    // Four objects asked for at once; the first byte comes one round trip (100 ms) later, then
    // 500 000 B at 10 Mbit/s (400 ms).
    const objects = [0, 1, 2, 3].map((i) => ({ receivedBytes: 125_000, startMs: 0, endMs: 100 + 100 * (i + 1) }));
    expect(segmentGoodput(objects)).toBeCloseTo(8e6);
    expect(segmentGoodput(objects, 100)).toBeCloseTo(10e6);
    // Two busy periods, one round trip each.
    const two = [{ receivedBytes: 125_000, startMs: 0, endMs: 200 }, { receivedBytes: 125_000, startMs: 900, endMs: 1100 }];
    expect(segmentGoodput(two, 100)).toBeCloseTo(10e6);
  });
  it('leaves a datagram object\'s wait on its repair timer out of the busy time, unless another object was in flight', () => {
    // 10-Mbit/s link, 50-ms path: 100 000 B from 50 to 130 ms, SENT, the repair timer waits until
    // 205 ms, the repair request's round trip, then 12 500 B from 255 to 265 ms: 90 ms of transfer.
    const alone = { receivedBytes: 112_500, startMs: 0, endMs: 265, waits: [[130, 205]] as const };
    // Two busy periods less one round trip each (at most half of the second): 80 + 30 ms, not 215.
    expect(segmentGoodput([alone], 50)).toBeCloseTo((112_500 * 8 * 1000) / 110);
    // A reliable object receiving throughout the wait keeps it busy time.
    const reliable = { receivedBytes: 100_000, startMs: 0, endMs: 265 };
    expect(segmentGoodput([alone, reliable], 50)).toBeCloseTo((212_500 * 8 * 1000) / 215);
  });
  it('takes at most half of a busy period off, so an inflated round trip cannot more than double a sample', () => {
    expect(segmentGoodput([{ receivedBytes: 125_000, startMs: 0, endMs: 100 }], 500)).toBeCloseTo(20e6);
  });
});

describe('ThroughputEstimator', () => {
  it('takes the harmonic mean of the window, dominated by the slow segment', () => {
    const e = new ThroughputEstimator(2);
    expect(e.estimate()).toBeNull();
    e.addSegment([{ receivedBytes: 125_000, startMs: 0, endMs: 100 }]); // 10 Mb/s
    e.addSegment([{ receivedBytes: 125_000, startMs: 0, endMs: 1000 }]); // 1 Mb/s
    expect(e.estimate()).toBeCloseTo(2 / (1 / 10e6 + 1 / 1e6));
    e.addSegment([{ receivedBytes: 125_000, startMs: 0, endMs: 1000 }]); // window drops the 10 Mb/s
    expect(e.estimate()).toBeCloseTo(1e6);
  });
  it('rejects a bad window', () => {
    expect(() => new ThroughputEstimator(0)).toThrow(/window/);
  });
});
