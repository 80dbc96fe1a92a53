import { describe, expect, it } from 'vitest';
import { LINK_WINDOW_S, LinkWatch } from './linkWatch';

describe('LinkWatch', () => {
  it('reports the rate over the last window once requests were in flight throughout it', () => {
    const w = new LinkWatch();
    w.sample(0, 0, true);
    w.sample(0.25, 125_000, true);
    expect(w.busyRateBps()).toBeNull(); // less than a window yet
    w.sample(0.5, 250_000, true);
    w.sample(0.75, 375_000, true);
    expect(w.busyRateBps()).toBeCloseTo(4e6);
    // Only the last window counts: a stall shows within it, and fills it.
    w.sample(1, 375_000, true);
    expect(w.busyRateBps()).toBeCloseTo((250_000 * 8) / LINK_WINDOW_S);
    w.sample(1.25, 375_000, true);
    w.sample(1.5, 375_000, true);
    expect(w.busyRateBps()).toBe(0);
  });

  it('says nothing about a window in which the link was idle at some sample', () => {
    const w = new LinkWatch();
    w.sample(0, 0, true);
    w.sample(0.25, 0, false);
    w.sample(0.5, 0, true);
    w.sample(0.75, 0, true);
    expect(w.busyRateBps()).toBeNull();
    w.sample(1, 0, true);
    expect(w.busyRateBps()).toBeNull(); // the idle sample opens this window
    w.sample(1.25, 0, true);
    expect(w.busyRateBps()).toBe(0);
  });

  it('says how long the page left between two samples of the window', () => {
    // The samples come from the page's main thread: a long task there delays one, and the bytes
    // of that time may be counted only after it — a window of nothing, which says nothing.
    const w = new LinkWatch();
    for (let i = 0; i <= 4; i++) w.sample(i * 0.05, i * 10_000, true);
    w.sample(1, 40_000, true);
    expect(w.busyWindow()).toEqual({ rateBps: 0, spanS: 0.8, bytes: 0, maxGapS: 0.8 });
    for (let i = 1; i <= 20; i++) w.sample(1 + i * 0.05, 40_000 + i * 10_000, true);
    expect(w.busyWindow()?.maxGapS).toBeCloseTo(0.05);
    expect(w.busyRateBps()).toBe(w.busyWindow()?.rateBps);
  });

  it('rejects samples that go back in time or in bytes', () => {
    const w = new LinkWatch();
    w.sample(1, 100, true);
    expect(() => w.sample(1, 200, true)).toThrow(/forward/);
    expect(() => w.sample(2, 50, true)).toThrow(/forward/);
  });
});
