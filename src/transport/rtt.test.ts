import { describe, expect, it } from 'vitest';
import { RttEstimator } from './rtt';

describe('RttEstimator', () => {
  it('is the smallest recent sample, so queueing behind other responses does not inflate it', () => {
    const rtt = new RttEstimator(4);
    expect(rtt.ms).toBe(50);
    for (const ms of [30, 700, 450, 900]) rtt.add(ms);
    expect(rtt.ms).toBe(30);
    // The window moves on: an old minimum expires, e.g. after a route change.
    for (const ms of [80, 90, 85, 95]) rtt.add(ms);
    expect(rtt.ms).toBe(80);
    rtt.add(Number.NaN);
    expect(rtt.ms).toBe(80);
  });
});
