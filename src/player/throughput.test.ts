import { describe, expect, it } from 'vitest';
import { BusyMeter, ThroughputEstimator } from './throughput';

describe('BusyMeter', () => {
  it('divides the bytes of every request by the time any was in flight, idle gaps left out', () => {
    const m = new BusyMeter();
    // 0–0.1 s and 0.9–1.0 s busy, 250 000 B: 10 Mbit/s, not 2.
    m.begin(0);
    m.add(125_000);
    m.end(0.1);
    m.begin(0.9);
    m.add(125_000);
    m.end(1.0);
    expect(m.take(1.0)).toBeCloseTo(10e6);
    expect(m.take(2.0)).toBeNull(); // idle since: nothing to say
  });

  it('counts overlapping requests of different segments once, whoever the bytes were for', () => {
    // Segment 0's object asked at 0 and answered at 2 s, segment 1's asked at 0.5 and answered at
    // 1 s, 1 MB each on an 8 Mbit/s link. Per segment that reads 4 and 16 Mbit/s; the link gave 8.
    const m = new BusyMeter();
    m.begin(0);
    m.begin(0.5);
    m.add(1e6);
    m.end(1);
    m.add(1e6);
    m.end(2);
    expect(m.take(2)).toBeCloseTo(8e6);
  });

  it('reads the busy period still open up to now, and carries a too-short reading over', () => {
    const m = new BusyMeter();
    m.begin(0);
    m.add(10_000);
    expect(m.take(0.01)).toBeNull();
    m.add(90_000);
    expect(m.take(0.1)).toBeCloseTo((100_000 * 8) / 0.1);
    m.add(100_000);
    expect(m.take(0.2)).toBeCloseTo((100_000 * 8) / 0.1);
  });

  it('refuses an end without a begin', () => {
    expect(() => new BusyMeter().end(1)).toThrow(/without a matching begin/);
  });
});

describe('ThroughputEstimator', () => {
  it('takes the harmonic mean of the window, dominated by the slow reading', () => {
    const e = new ThroughputEstimator(2);
    expect(e.estimate()).toBeNull();
    e.add(10e6);
    e.add(1e6);
    expect(e.estimate()).toBeCloseTo(2 / (1 / 10e6 + 1 / 1e6));
    e.add(1e6); // the window drops the 10 Mbit/s
    expect(e.estimate()).toBeCloseTo(1e6);
    e.add(0);
    e.add(Number.NaN);
    expect(e.estimate()).toBeCloseTo(1e6);
  });

  it('rejects a bad window', () => {
    expect(() => new ThroughputEstimator(0)).toThrow(/window/);
  });
});
