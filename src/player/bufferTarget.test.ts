import { describe, expect, it } from 'vitest';
import { BufferTarget, STARVED_SHARE, STARVED_WINDOWS_KEPT, VOLATILE_MEMORY_S } from './bufferTarget';
import { LinkWatch } from '../link/linkWatch';

const FLOOR = 4e6;
const target = () => new BufferTarget({ baseS: 2, volatileS: 4, sceneFloorBps: FLOOR });

/**
 * Feeds quarter-second samples from `fromS` to `toS` at `rateBps(t)`, busy as `busy(t)`, through a
 * link watch into the target, as the playout loop does; returns the byte total.
 */
function feed(t: BufferTarget, fromS: number, toS: number, rateBps: (s: number) => number, busy: (s: number) => boolean = () => true, startBytes = 0, watch = new LinkWatch()): number {
  let bytes = startBytes;
  for (let s = fromS; s <= toS + 1e-9; s += 0.25) {
    watch.sample(s, bytes, busy(s));
    t.observe(s, watch.busyWindow());
    bytes += (rateBps(s) * 0.25) / 8;
  }
  return bytes;
}

describe('BufferTarget', () => {
  it('keeps the base on a link that never delivers less than the starved share of the scene floor in a busy second', () => {
    const t = target();
    feed(t, 0, 60, (s) => (s % 7 < 1 ? STARVED_SHARE * FLOOR * 1.05 : 20e6));
    expect(t.targetS(60)).toBe(2);
  });

  it('grows after a starved second and returns to the base once the memory has passed without one', () => {
    const t = target();
    const watch = new LinkWatch();
    const bytes = feed(t, 0, 10, () => 20e6, () => true, 0, watch);
    expect(t.targetS(10)).toBe(2);
    feed(t, 10.25, 12, (s) => (s < 11.5 ? 0 : 20e6), () => true, bytes, watch);
    expect(t.targetS(12)).toBe(4);
    expect(t.targetS(11.5 + VOLATILE_MEMORY_S - 1)).toBe(4);
    expect(t.targetS(11.5 + VOLATILE_MEMORY_S)).toBe(2);
  });

  it('a busy second at well under half of the scene floor is starved: a deep trough, not only an outage', () => {
    // The 5G driving trace's second at 50 s, scaled for the demo content: 0.58 of 1.6 Mbit/s.
    const t = target();
    const watch = new LinkWatch();
    const bytes = feed(t, 0, 10, () => 20e6, () => true, 0, watch);
    feed(t, 10.25, 12, (s) => (s < 11.5 ? 0.36 * FLOOR : 20e6), () => true, bytes, watch);
    expect(t.targetS(12)).toBe(4);
  });

  it('keeps the first window of each run of starved ones, with what the link watch measured', () => {
    const t = target();
    const watch = new LinkWatch();
    let bytes = feed(t, 0, 10, () => 20e6, () => true, 0, watch);
    bytes = feed(t, 10.25, 13, (s) => (s < 11.5 ? 0 : 20e6), () => true, bytes, watch);
    feed(t, 13.25, 16, (s) => (s < 14.5 ? 0 : 20e6), () => true, bytes, watch);
    expect(t.starved.map((w) => w.atS)).toEqual([11, 14]);
    expect(t.starved[0]).toMatchObject({ rateBps: expect.any(Number), spanS: 0.75, maxGapS: 0.25 });
    expect(t.starved[0].rateBps).toBeLessThan(STARVED_SHARE * FLOOR);
  });

  it('keeps a bounded number of starved windows on a link that starves again and again', () => {
    const t = target();
    const watch = new LinkWatch();
    feed(t, 0, 2 * STARVED_WINDOWS_KEPT * 3, (s) => (s % 3 < 1.5 ? 0 : 20e6), () => true, 0, watch);
    expect(t.starved).toHaveLength(STARVED_WINDOWS_KEPT);
  });

  it('an idle link is not a starved one: nothing in flight, nothing expected', () => {
    const t = target();
    feed(t, 0, 10, (s) => (s < 5 ? 20e6 : 0), (s) => s < 5);
    expect(t.targetS(10)).toBe(2);
  });

  it('a starved stretch shorter than the window does not count', () => {
    const t = target();
    feed(t, 0, 10, (s) => (s >= 5 && s < 5.5 ? 0 : 20e6));
    expect(t.targetS(10)).toBe(2);
  });

  it('is fixed when the volatile target equals the base', () => {
    const t = new BufferTarget({ baseS: 3, volatileS: 3, sceneFloorBps: FLOOR });
    feed(t, 0, 5, () => 0);
    expect(t.targetS(5)).toBe(3);
  });

  it('rejects a target that is not positive or a volatile target below the base', () => {
    expect(() => new BufferTarget({ baseS: 0, volatileS: 4, sceneFloorBps: FLOOR })).toThrow(/positive/);
    expect(() => new BufferTarget({ baseS: 2, volatileS: 1, sceneFloorBps: FLOOR })).toThrow(/must be at least the buffer target/);
  });
});
