import { describe, expect, it } from 'vitest';
import { PAGE_PAUSE_MS, StallWatch } from './stall';

/** Checks every 250 ms, as the session does, over (fromMs, toMs]; the first time found stalled. */
function firstStall(w: StallWatch, fromMs: number, toMs: number): number | undefined {
  for (let t = fromMs + 250; t <= toMs; t += 250) if (w.stalled(t)) return t;
  return undefined;
}

describe('StallWatch', () => {
  it('is stalled only while requests wait and no byte has come for the timeout', () => {
    const w = new StallWatch(2000);
    expect(firstStall(w, 0, 10_000)).toBeUndefined(); // nothing waiting: an idle session is not a stalled one
    w.begin(10_000);
    expect(firstStall(w, 10_000, 11_750)).toBeUndefined();
    expect(w.stalled(12_000)).toBe(true);
    w.progress(12_100);
    expect(firstStall(w, 12_000, 20_000)).toBe(14_250);
    w.end();
    expect(firstStall(w, 14_250, 20_000)).toBeUndefined();
  });

  it('requests made during a stall do not restart its clock; a request after idle does', () => {
    const w = new StallWatch(2000);
    w.begin(0);
    expect(firstStall(w, 0, 1500)).toBeUndefined();
    w.begin(1500); // the player asks for the next segment while the first still waits
    expect(firstStall(w, 1500, 5000)).toBe(2000);
    w.end();
    w.end();
    expect(firstStall(w, 2000, 5000)).toBeUndefined();
    w.begin(5000); // first request after an idle spell: its own clock
    expect(firstStall(w, 5000, 10_000)).toBe(7000);
  });

  it('after a late check, judges on the next one: bytes queued behind a long task are not a stall', () => {
    const w = new StallWatch(2000);
    w.begin(0);
    expect(firstStall(w, 0, 1000)).toBeUndefined();
    // A 3-s long task: the next check runs at 4000, possibly before the reads queued behind it.
    expect(w.stalled(4000)).toBe(false);
    w.progress(4001); // the bytes that came during the pause
    expect(firstStall(w, 4000, 6000)).toBeUndefined();
    // With no byte during the pause, the check after the late one finds the stall.
    const v = new StallWatch(2000);
    v.begin(0);
    expect(firstStall(v, 0, 1000)).toBeUndefined();
    expect(v.stalled(1000 + PAGE_PAUSE_MS + 2000)).toBe(false);
    expect(v.stalled(4250)).toBe(true);
  });

  it('still finds stalls when every check is late (a hidden tab throttles timers to 1 s)', () => {
    const w = new StallWatch(2000);
    w.begin(0);
    expect(w.stalled(1000)).toBe(false); // the first check: nothing to compare its lateness with
    expect(w.stalled(2000)).toBe(false); // late: leaves the verdict to the next check
    expect(w.stalled(3000)).toBe(true);
  });

  it('rejects a timeout that is not positive', () => {
    expect(() => new StallWatch(0)).toThrow(/positive/);
  });
});
