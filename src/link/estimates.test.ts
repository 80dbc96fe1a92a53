import { describe, expect, it } from 'vitest';
import { belowFloorCapBps } from './estimates';
import { playOn, scene, ScriptedLink } from '../testing/scriptedLink';
import { VirtualClock } from '../player/clock';
import { AdaptivePolicy } from '../player/adaptive';

describe('the throughput the planner uses', () => {
  it('is the estimate unless the busy link delivers less than the scene floor', () => {
    expect(belowFloorCapBps(12e6, null, 4e6)).toBe(12e6); // idle at some sample: says nothing
    expect(belowFloorCapBps(12e6, 5e6, 4e6)).toBe(12e6); // slower than the estimate, above the floor
    expect(belowFloorCapBps(12e6, 3e6, 4e6)).toBe(3e6);
    expect(belowFloorCapBps(2e6, 3e6, 4e6)).toBe(2e6); // never raised
    expect(belowFloorCapBps(null, 3e6, 4e6)).toBeNull(); // before the first segment: the lowest rungs anyway
  });

  it('in a trough below the floor, new segments are planned at the lowest rungs, not at the rate before it', async () => {
    // Four objects of 1–16 Mbit/s (floor 4 Mbit/s); the link falls from 60 to 3 Mbit/s at 5 s.
    // Segments asked for once the link has been busy below the floor for a window (0.75 s) are
    // planned at 3 Mbit/s: every object at its lowest rung, none at the rungs of before.
    const clock = new VirtualClock();
    const link = new ScriptedLink(clock, (t) => (t < 5 ? 60e6 : 3e6));
    const session = await playOn(clock, link, 12, { scene: scene(4), policy: new AdaptivePolicy() });
    // Planned requests, not the lowest-rung replacements of abandoned ones (those carry no plan rate).
    const inTrough = session.segmentRecords().filter((r) => r.requestedAtS >= 6 && r.plannedThroughputBps !== undefined);
    expect(inTrough.length).toBeGreaterThanOrEqual(8);
    expect(Math.max(...inTrough.map((r) => r.quality))).toBe(0);
    expect(Math.max(...inTrough.map((r) => r.plannedThroughputBps!))).toBeLessThan(4e6);
    const before = session.segmentRecords().filter((r) => r.requestedAtS < 5);
    expect(Math.max(...before.map((r) => r.quality))).toBeGreaterThan(1);
  });
});
