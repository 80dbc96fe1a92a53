import { describe, expect, it } from 'vitest';
import { ARRIVAL_MERGE_MS, ByteArrivals } from './arrivals';

describe('ByteArrivals', () => {
  it('says what arrived after a span\'s start and by its end', () => {
    const a = new ByteArrivals();
    a.add(1000, 2);
    a.add(500, 2.5); // merged with the one before, at 2.5 ms
    a.add(2000, 12);
    expect(a.between(0, 20)).toBe(3500);
    expect(a.between(0, 5)).toBe(1500);
    expect(a.between(2.5, 10)).toBe(0);
    expect(a.between(5, 12)).toBe(2000);
    // A delivery whose last byte was stamped just before the player recorded it.
    expect(a.between(5, 12 - ARRIVAL_MERGE_MS / 2)).toBe(2000);
    expect(a.between(20, 10)).toBe(0);
  });
  it('ignores empty and bad arrivals and counts a late-stamped one at the last time', () => {
    const a = new ByteArrivals();
    a.add(0, 1);
    a.add(-5, 1);
    a.add(7, Number.NaN);
    a.add(100, 20);
    a.add(50, 3); // an earlier time from another caller's clock reading
    expect(a.between(10, 25)).toBe(150);
    expect(a.between(0, 10)).toBe(0);
    // The running total counts every positive arrival, a badly stamped one too.
    expect(a.totalBytes).toBe(157);
  });
  it('keeps a bounded history (the last 30 s and a little more)', () => {
    const a = new ByteArrivals();
    for (let t = 0; t < 120_000; t += 0.25) a.add(10, t);
    expect(a.between(0, 60_000)).toBe(0);
    expect(a.between(120_000 - 30_000, 120_000)).toBeCloseTo(30_000 * 40, -2);
    const kept = (a as unknown as { times: number[] }).times.length;
    expect(kept).toBeLessThanOrEqual(35_000 / ARRIVAL_MERGE_MS + 1);
  });
});
